import { Field, Float, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { UsageScope as UsageScopeValue } from '../../domain/usage-days';

export const UsageScope: { [K in UsageScopeValue]: K } = { ORGANIZATION: 'ORGANIZATION', CALLER: 'CALLER' };
registerEnumType(UsageScope, {
  name: 'UsageScope',
  valuesConfig: {
    ORGANIZATION: { description: "Every turn of the caller's organisation (admins)." },
    CALLER: { description: 'The turns the caller created.' },
  },
});

@ObjectType({ description: 'Turns created on one UTC calendar day, by their current status, and their estimated cost.', simpleResolvers: true })
export class UsageDay {
  @Field(() => String, { description: 'YYYY-MM-DD (UTC).' }) date!: string;
  @Field(() => Int) pendingTurns!: number;
  @Field(() => Int) completedTurns!: number;
  @Field(() => Int) failedTurns!: number;
  @Field(() => Int) cancelledTurns!: number;
  @Field(() => Float, { description: 'Sum of the estimates of the turns that have one.' }) estimatedCostUsd!: number;
}

@ObjectType({ simpleResolvers: true })
export class UsageByDay {
  @Field(() => UsageScope) scope!: UsageScopeValue;
  @Field(() => [UsageDay], { description: 'Oldest first, one per day of the window, days without turns included.' }) days!: UsageDay[];
}
