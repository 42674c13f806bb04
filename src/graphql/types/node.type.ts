import { Field, ID, InterfaceType } from 'type-graphql';

/** Relay's object identification: every object with a global id implements it. */
@InterfaceType({ description: 'An object with a global id.' })
export abstract class Node {
  @Field(() => ID) id!: string;
}
