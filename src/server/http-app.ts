import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type RequestHandler, type Router } from 'express';
import type { Config } from '../config';
import { isDomainError } from '../domain/errors';
import type { Protection } from '../graphql/protection';
import type { GraphQLContext } from '../graphql/context';
import { isExpectedError, toGraphQLError } from '../graphql/error-mapping';
import { Loaders } from '../graphql/loaders';
import { gatewaySchema } from '../graphql/schema';
import type { Services } from '../graphql/services';
import type { Logger } from '../logger';
import type { TokenVerifier } from '../auth/token-verifier.port';
import { authenticate, authenticateFirst } from './auth';
import { jsonBody } from './json-body';
import { assignRequestId, HTTP_STATUS_OF, presentHttpError, requestIdOf } from './http-errors';

/** A named check /readyz runs; it throws when its dependency is not usable. */
export type ReadinessCheck = () => Promise<void>;

export interface HttpAppDeps {
  readonly config: Config;
  /** Checks bearer tokens (the composition root picks shared secret and/or identity provider). */
  readonly tokens: TokenVerifier;
  readonly logger: Logger;
  readonly services: Services;
  readonly protection: Protection;
  readonly readiness: Readonly<Record<string, ReadinessCheck>>;
  /**
   * Checks that are reported but do not make the instance unready: queries and mutations
   * still work without them (e.g. the event bus for subscriptions), and taking every
   * instance out of rotation when a shared dependency fails would stop those too.
   */
  readonly degradable?: Readonly<Record<string, ReadinessCheck>>;
  readonly httpServer: Server;
  /** True once shutdown began: /readyz answers 503 at once, so a balancer stops routing here while requests drain. */
  readonly draining?: () => boolean;
  /** Further HTTP routes (REST execute, metrics, event streams, blobs, the dashboard), mounted before /graphql. */
  readonly routers?: readonly Router[];
  /** Runs first on every request (metrics, traces). */
  readonly middleware?: readonly RequestHandler[];
  /** Further Apollo plugins (operation metrics). */
  readonly plugins?: readonly ApolloServerPlugin<GraphQLContext>[];
}

/** The HTTP server's request listener and the Apollo server behind it. */
export interface HttpApp {
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  readonly apollo: ApolloServer<GraphQLContext>;
}

/**
 * The one HTTP pipeline: every request goes through express, in this order: request id and
 * `deps.middleware`, the bearer token of every POST (before its body is read), the one JSON body parser, GraphQL over HTTP at /graphql through Apollo's
 * express integration, health at /healthz and /readyz, the routes of `deps`, and the one
 * error presenter (http-errors.ts).
 */
export async function createHttpApp(deps: HttpAppDeps): Promise<HttpApp> {
  const { config, logger, services, protection } = deps;
  const apollo = new ApolloServer<GraphQLContext>({
    schema: gatewaySchema(),
    introspection: !config.isProduction,
    hideSchemaDetailsFromClientErrors: config.isProduction,
    includeStacktraceInErrorResponses: false,
    allowBatchedHttpRequests: false,
    // main.ts owns SIGTERM/SIGINT; Apollo's own handlers would re-raise the signal mid-shutdown.
    stopOnTerminationSignals: false,
    csrfPrevention: true,
    validationRules: protection.validationRules,
    parseOptions: protection.parseOptions,
    formatError: protection.formatError,
    logger,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer: deps.httpServer }),
      ApolloServerPluginCacheControlDisabled(),
      ...protection.plugins,
      errorLogging(logger),
      ...(deps.plugins ?? []),
    ],
  });
  await apollo.start();

  const app = express();
  app.disable('x-powered-by');
  // A GraphQL or REST answer is not revalidated: hashing each one for an ETag is wasted work.
  app.set('etag', false);
  app.set('trust proxy', false);
  app.use(assignRequestId, ...(deps.middleware ?? []));
  // The token before the body: a request without a valid one costs no body read, no JSON parse.
  app.post(/.*/, authenticateFirst(deps.tokens));
  app.use(jsonBody(config.limits.bodyLimitBytes));

  // GraphQL over HTTP first: nearly every request is one. `all` matches /graphql (and /graphql/) only, not /graphql/stream.
  app.all(
    '/graphql',
    expressMiddleware(apollo, {
      context: async ({ req, res }) => {
        try {
          const { caller } = await authenticate(req.headers.authorization, deps.tokens);
          return { caller, services, loaders: new Loaders(caller, services), requestId: requestIdOf(res), budget: protection.responseBudget() };
        } catch (e) {
          throw isDomainError(e) ? toGraphQLError(e, { http: { status: HTTP_STATUS_OF[e.code] } }) : e;
        }
      },
    }),
  );

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', uptimeSeconds: Math.round(process.uptime()) });
  });

  app.get('/readyz', async (_req, res) => {
    if (deps.draining?.()) {
      res.status(503).json({ status: 'draining', checks: {} });
      return;
    }
    const checks: Record<string, string> = {};
    const degradable = deps.degradable ?? {};
    await Promise.all(
      Object.entries({ ...deps.readiness, ...degradable }).map(async ([name, check]) => {
        try {
          await check();
          checks[name] = 'ok';
        } catch (e) {
          logger.warn({ err: e, check: name }, 'readiness check failed');
          checks[name] = 'unavailable';
        }
      }),
    );
    const ready = Object.keys(deps.readiness).every((name) => checks[name] === 'ok');
    const complete = Object.values(checks).every((v) => v === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? (complete ? 'ready' : 'degraded') : 'not ready', checks });
  });

  for (const router of deps.routers ?? []) app.use(router);
  app.use(presentHttpError(logger));

  return { handle: app, apollo };
}

/** Unexpected errors are masked for the client (formatError) and logged here with the request id. */
function errorLogging(logger: Logger): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async didEncounterErrors({ errors, contextValue, operationName }) {
          for (const error of errors) {
            if (isExpectedError(error)) continue;
            logger.error(
              { err: error.originalError ?? error, requestId: contextValue.requestId, operationName, path: error.path },
              'unexpected error while executing a GraphQL operation',
            );
          }
        },
      };
    },
  };
}
