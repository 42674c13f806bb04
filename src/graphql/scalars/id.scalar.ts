import { GraphQLError, GraphQLID, GraphQLScalarType, type ValueNode } from 'graphql';
import { idProblem } from '../../domain/ids';

/**
 * The schema's `ID`: graphql-js's, parsed under the gateway's id rule (domain/ids.ts), so
 * every ID argument and input field, on every transport, refuses an ill-formed, over-long or
 * empty id before a resolver runs. It keeps the name `ID` (the SDL does not change) and must
 * be the only `ID` in the schema: graphql-js refuses to build one that also references
 * type-graphql's (graphql-js's) own.
 */
export const ID = new GraphQLScalarType<string, string>({
  name: 'ID',
  description: GraphQLID.description,
  serialize: (value) => GraphQLID.serialize(value),
  parseValue: (value) => checked(GraphQLID.parseValue(value)),
  parseLiteral: (node: ValueNode, variables) => checked(GraphQLID.parseLiteral(node, variables), node),
});

/**
 * A refused id is the client's mistake: BAD_USER_INPUT, whether it came as a variable or as
 * a literal (error-mapping.ts keeps this code where Apollo would call the literal a
 * validation failure). Over HTTP both are 400: Apollo answers so for variables that do not
 * coerce and for documents that do not validate.
 */
function checked(id: string, literal?: ValueNode): string {
  const problem = idProblem(id);
  if (problem) throw new RefusedIdError(`an ID ${problem}`, literal);
  return id;
}

export class RefusedIdError extends GraphQLError {
  constructor(message: string, literal: ValueNode | undefined) {
    super(message, { ...(literal ? { nodes: literal } : {}), extensions: { code: 'BAD_USER_INPUT' } });
    this.name = 'RefusedIdError';
  }
}
