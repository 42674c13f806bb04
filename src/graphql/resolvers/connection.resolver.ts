import { FieldResolver, Int, Resolver, Root } from 'type-graphql';
import type { ConnectionSource } from '../connections';
import { AgentSessionSummaryConnection } from '../types/session.type';
import { AgentSessionTurnConnection } from '../types/turn.type';

@Resolver(() => AgentSessionSummaryConnection)
export class SessionConnectionResolver {
  @FieldResolver(() => Int)
  totalCount(@Root() connection: ConnectionSource<unknown>): Promise<number> {
    return connection.count();
  }

  @FieldResolver(() => Boolean)
  totalCountIsLowerBound(@Root() connection: ConnectionSource<unknown>): Promise<boolean> {
    return connection.countIsLowerBound();
  }
}

@Resolver(() => AgentSessionTurnConnection)
export class TurnConnectionResolver {
  @FieldResolver(() => Int)
  totalCount(@Root() connection: ConnectionSource<unknown>): Promise<number> {
    return connection.count();
  }
}
