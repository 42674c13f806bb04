import { issueToken } from '../src/server/auth';
import { BENCH_SECRET } from './bench-child';

/*
 * bench/execute.bench.ts's settings, read from the environment once (its header lists them).
 */
export const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/**
 * Closed-loop load on each target before its first measured round, the same for all three: a
 * gateway is a long-running server, and in its first seconds of load 10–27% of its process's
 * CPU samples are V8's optimising compiler; 7–17% after 5 s, 3% after two minutes (perf).
 */
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
export const IN_FLIGHT_LEVELS = (process.env.BENCH_IN_FLIGHT ?? '500,2000').split(',').map(Number);
export const LATENCY_MS = Number(process.env.BENCH_PROVIDER_LATENCY_MS ?? 2000);
export const COUNTED_EXECUTES = 10;
export const ORGS = Math.max(1, Number(process.env.BENCH_ORGS ?? 1));
/** One admin token per org: org 0 is `acme`, the others `acme-1` … */
export const TOKENS = Array.from({ length: ORGS }, (_, org) =>
  issueToken({ userId: 'bench-user', orgId: org === 0 ? 'acme' : `acme-${org}`, roles: ['admin'] }, BENCH_SECRET),
);
export const TOKEN = TOKENS[0] as string;

/**
 * How the gateway's clients call execute: the GraphQL mutation (what the goals are about), or
 * with BENCH_EXECUTE_VIA=rest DD-004's REST route, the same request handler without the
 * GraphQL layer (parse, validation, limits, execution): the difference is that layer's cost.
 */
export const VIA_REST = process.env.BENCH_EXECUTE_VIA === 'rest';
