import { Field, InterfaceType } from 'type-graphql';
import { ID } from '../scalars/id.scalar';

/** Relay's object identification: every object with a global id implements it. */
@InterfaceType({ description: 'An object with a global id.' })
export abstract class Node {
  @Field(() => ID) id!: string;
}
