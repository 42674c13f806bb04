import { Field, Int, ObjectType } from 'type-graphql';

/** AGN-033 6.3. */
@ObjectType({ simpleResolvers: true })
export class FileRef {
  @Field(() => String) name!: string;
  @Field(() => String) mimeType!: string;
  @Field(() => String) url!: string;
  @Field(() => Int) sizeBytes!: number;
  @Field(() => String) contentHash!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => Date, { nullable: true }) contentExpires!: Date | null;
}
