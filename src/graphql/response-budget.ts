import {
  defaultFieldResolver,
  getNullableType,
  isListType,
  isObjectType,
  type FormattedExecutionResult,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from 'graphql';
import { DomainError } from '../domain/errors';

/**
 * The second line of defence behind the cost model: how many list items (objects, or
 * scalars in lists) one response may hold, counted while it executes. Every object a
 * response holds beyond a list item is bounded by the document itself (depth, aliases,
 * tokens), so counting list items bounds the response. The first list that would cross the
 * limit fails the operation; every later list resolves empty, so nothing more is loaded,
 * and the transport answers with the one error instead of partial data.
 */
export class ResponseBudget {
  private used = 0;
  private over = false;

  constructor(readonly maxItems: number) {}

  /** A new budget with the same limit (each subscription event gets its own). */
  fresh(): ResponseBudget {
    return new ResponseBudget(this.maxItems);
  }

  get exceeded(): boolean {
    return this.over;
  }

  /** Counts a resolved list; throws when it crosses the limit, and returns it unchanged (or empty, once over). */
  take(value: unknown): unknown {
    if (!Array.isArray(value)) return value;
    if (this.over) return [];
    this.used += value.length;
    if (this.used > this.maxItems) {
      this.over = true;
      throw responseTooLarge(this.maxItems);
    }
    return value;
  }

  /** What the client receives instead of the partial result, once the budget is exceeded. */
  result(): FormattedExecutionResult {
    const error = responseTooLarge(this.maxItems);
    return { data: null, errors: [{ message: error.message, extensions: { code: error.code, ...error.details } }] };
  }
}

const responseTooLarge = (maxItems: number) =>
  new DomainError(
    'RESPONSE_TOO_LARGE',
    `The response would hold more than ${maxItems} list items: ask for smaller pages (first) or fewer nested lists`,
    { maxItems },
  );

/** What a resolver's context must offer for the budget to be counted. */
interface BudgetedContext {
  readonly budget: ResponseBudget;
}

/**
 * Makes every list field of the schema's object types count its items against the
 * operation's budget (`context.budget`). Introspection types are left alone: their answer
 * is bounded by the schema. Mutates the schema's field definitions once, at build time.
 */
export function countListItems(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (!isListType(getNullableType(field.type))) continue;
      const resolve: GraphQLFieldResolver<unknown, BudgetedContext> = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, context: BudgetedContext, info) => {
        const value: unknown = resolve(source, args, context, info);
        return value instanceof Promise ? value.then((v: unknown) => context.budget.take(v)) : context.budget.take(value);
      };
    }
  }
  return schema;
}
