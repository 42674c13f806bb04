import { ObjectType } from 'type-graphql';

/**
 * Where a fork came from (issue 39). `session` and `turn` are resolved for the caller: null
 * when the caller may no longer read the source (fork.resolver.ts).
 */
@ObjectType({ description: 'The session and turn a session was forked at.' })
export class SessionForkOrigin {}
