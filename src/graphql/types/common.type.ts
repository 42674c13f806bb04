import { Field, ObjectType } from 'type-graphql';
import { ID } from '../scalars/id.scalar';

@ObjectType({ description: 'A reference to another entity: its id and a display text (spec: EntityHeader).', simpleResolvers: true })
export class EntityHeader {
  @Field(() => ID) id!: string;
  @Field(() => String) text!: string;
}

@ObjectType({ simpleResolvers: true })
export class Viewer {
  @Field(() => EntityHeader) user!: EntityHeader;
  @Field(() => EntityHeader) organization!: EntityHeader;
  @Field(() => [String]) roles!: string[];
}

@ObjectType({ simpleResolvers: true })
export class PageInfo {
  @Field(() => Boolean) hasNextPage!: boolean;
  @Field(() => String, { nullable: true }) endCursor!: string | null;
  @Field(() => Boolean, { description: 'Lists that page only forward (first/after) may answer false.' }) hasPreviousPage!: boolean;
  @Field(() => String, { nullable: true }) startCursor!: string | null;
}
