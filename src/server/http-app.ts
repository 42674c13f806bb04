import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { ApolloServer, HeaderMap, type ApolloServerPlugin, type ContextFunction } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import express, { type Router } from 'express';
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
import { authenticate } from './auth';
import { jsonBody } from './json-body';
import { assignRequestId, graphqlRequestFailed, HTTP_STATUS_OF, requestIdOf } from './http-errors';
import { expressFailure, pathOf, plainLane, type PlainHandler, type PlainRequest, type PlainResponse, type PlainRoute } from './plain-lane';

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
  /** Further HTTP routes (metrics, event streams, blobs, the dashboard), mounted before /graphql. */
  readonly routers?: readonly Router[];
  /** Further POST routes served like POST /graphql, outside express (REST execute). */
  readonly plainRoutes?: readonly PlainRoute[];
  /** Runs first on every request (metrics, traces). */
  readonly middleware?: readonly PlainHandler[];
  /** Further Apollo plugins (operation metrics). */
  readonly plugins?: readonly ApolloServerPlugin<GraphQLContext>[];
}

/** The HTTP server's request listener and the Apollo server behind it. */
export interface HttpApp {
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  readonly apollo: ApolloServer<GraphQLContext>;
}

/**
 * GraphQL over HTTP at /graphql, health at /healthz and /readyz, the routes of `deps`: POST
 * /graphql (nearly every request) and the plain routes through plain lanes, everything else
 * through express.
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
  app.set('trust proxy', false);
  const first = [assignRequestId, ...(deps.middleware ?? [])];
  for (const handler of first) app.use(handler);

  const graphql: PlainHandler[] = [
    jsonBody(config.limits.bodyLimitBytes),
    graphqlOverHttp(apollo, async ({ req, res }) => {
      const requestId = requestIdOf(res);
      try {
        const { caller } = await authenticate(req.headers.authorization, deps.tokens);
        return { caller, services, loaders: new Loaders(caller, services), requestId, budget: protection.responseBudget() };
      } catch (e) {
        throw isDomainError(e) ? toGraphQLError(e, { http: { status: HTTP_STATUS_OF[e.code] } }) : e;
      }
    }),
  ];
  // What express still routes to a plain route (/graphql/, /GraphQL, GET /graphql): the same handlers and answers.
  const expressRoute = (route: PlainRoute) => [...route.handlers, expressFailure(route.failed)];
  const graphqlRoute: PlainRoute = { path: '/graphql', handlers: graphql, failed: graphqlRequestFailed(logger) };
  const plainRoutes = [graphqlRoute, ...(deps.plainRoutes ?? [])];
  const graphqlInExpress = expressRoute(graphqlRoute);
  app.post(graphqlRoute.path, ...graphqlInExpress);
  for (const route of deps.plainRoutes ?? []) app.post(route.path, ...expressRoute(route));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', uptimeSeconds: Math.round(process.uptime()) });
  });

  app.get('/readyz', async (_req, res) => {
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
  app.use('/graphql', ...graphqlInExpress);

  const lanes = new Map(plainRoutes.map((route) => [route.path, plainLane([...first, ...route.handlers], route.failed)]));
  return {
    handle: (req, res) => {
      const lane = req.method === 'POST' ? lanes.get(pathOf(req.url)) : undefined;
      if (lane) lane(req, res);
      else app(req, res);
    },
    apollo,
  };
}

/**
 * Apollo behind express, as @as-integrations/express5 does it, except for the answer: one
 * `end` with the text. Its `res.send` hashed every answer for an ETag (a GraphQL answer is
 * not revalidated) and turned the text into a Buffer, so node:http wrote headers and body
 * as two chunks instead of one; it also read the query string with the legacy url.parse.
 */
function graphqlOverHttp(
  apollo: ApolloServer<GraphQLContext>,
  context: ContextFunction<[{ req: PlainRequest; res: PlainResponse }], GraphQLContext>,
): PlainHandler {
  return async (req, res) => {
    const headers = new HeaderMap();
    for (const [key, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
    }
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const answer = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: (req.method ?? '').toUpperCase(), headers, search: query === -1 ? '' : url.slice(query), body: req.body },
      context: () => context({ req, res }),
    });
    for (const [key, value] of answer.headers) res.setHeader(key, value);
    res.statusCode = answer.status ?? 200;
    if (answer.body.kind === 'complete') {
      res.end(answer.body.string);
      return;
    }
    for await (const chunk of answer.body.asyncIterator) res.write(chunk);
    res.end();
  };
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
