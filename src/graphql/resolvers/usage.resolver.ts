import { Arg, Ctx, Int, Query, Resolver } from 'type-graphql';
import { DEFAULT_USAGE_DAYS, MAX_USAGE_DAYS } from '../../domain/usage-days';
import type { GraphQLContext } from '../context';
import { UsageByDay } from '../types/usage.type';

@Resolver()
export class UsageResolver {
  @Query(() => UsageByDay, {
    description: `Turns per day by status and their estimated cost over the last \`days\` days (1-${MAX_USAGE_DAYS}, today included, UTC): the organisation's for admins, the caller's own turns for everyone else.`,
  })
  async usageByDay(
    @Ctx() { caller, services }: GraphQLContext,
    @Arg('days', () => Int, { nullable: true, defaultValue: DEFAULT_USAGE_DAYS }) days: number | null,
  ): Promise<UsageByDay> {
    const usage = await services.usage.usageByDay(caller, days ?? DEFAULT_USAGE_DAYS);
    return {
      scope: usage.scope,
      days: usage.days.map(({ date, turns, estimatedCostUsd }) => ({
        date,
        pendingTurns: turns.PENDING,
        completedTurns: turns.COMPLETED,
        failedTurns: turns.FAILED,
        cancelledTurns: turns.CANCELLED,
        estimatedCostUsd,
      })),
    };
  }
}
