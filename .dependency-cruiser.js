/**
 * The layer rules of docs/ARCHITECTURE.md ("Layer rules" says why each exists), checked by `npm test` (test/run.mjs)
 * before any test runs: an arrow that points the wrong way fails the build. Type-only imports
 * count (tsPreCompilationDeps): a type is a dependency too.
 *
 * Run it alone: npx depcruise --config .dependency-cruiser.js src packages/client/src
 */

/** External systems: only adapters (and persistence, for the database) may import them. */
const DRIVERS = 'node_modules/(typeorm|mysql2|better-sqlite3|ioredis|@aws-sdk|openai|@qdrant)/';
/** Tables and the database plumbing: the stores' business, nobody else's. */
const TABLES = ['\\.entities\\.ts$', '^src/persistence/'];
/** Features and the infrastructure below the orchestrator. */
const BELOW_ORCHESTRATOR = '^src/(domain|persistence|sessions|contexts|events|idempotency|llm|retrieval|blobs|budgets|webhooks)/|^src/logger(\\.port)?\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles: each module can be read (and tested) after the ones it uses.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-imports-only-domain',
      severity: 'error',
      comment: 'domain/ holds pure types and rules: it imports nothing but domain/ (and node:crypto, for hashing).',
      from: { path: '^src/domain/' },
      to: { pathNot: ['^src/domain/', '^(node:)?crypto$'] },
    },
    {
      name: 'orchestrator-imports-only-ports',
      severity: 'error',
      comment:
        'The orchestrator depends on ports (*.port.ts, carrying the errors they may throw) and the domain only: never adapters, drivers, tables or the configuration.',
      from: { path: '^src/orchestrator/' },
      to: { pathNot: ['^src/orchestrator/', '^src/domain/', '\\.port\\.ts$'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'transports-import-no-drivers-or-tables',
      severity: 'error',
      comment: 'GraphQL, REST/HTTP and the web client read through services and ports; they never import drivers or tables.',
      from: { path: ['^src/(graphql|server|web)/', '^packages/client/'] },
      to: { path: [DRIVERS, ...TABLES] },
    },
    {
      name: 'persistence-imports-no-feature',
      severity: 'error',
      comment: 'The database plumbing knows no feature: each feature brings its own entity schemas (gateway-database.ts lists them).',
      from: { path: '^src/persistence/' },
      to: { path: '^src/', pathNot: ['^src/persistence/', '^src/domain/', '^src/logger\\.ts$'] },
    },
    {
      name: 'arrows-point-down',
      severity: 'error',
      comment: 'Features and their adapters never import what stands above them: the orchestrator, the transports, the composition root.',
      from: { path: BELOW_ORCHESTRATOR },
      to: { path: '^src/(orchestrator|graphql|server|cli|web|composition)/|^src/(main|gateway-database)\\.ts$|^packages/client/' },
    },
    {
      name: 'client-package-stands-alone',
      severity: 'error',
      comment:
        'The typed client is published on its own (packages/client): it imports its own files and the packages it depends on (graphql-ws, graphql-sse, graphql as a peer, the typed-document types), nothing of the server.',
      from: { path: '^packages/client/' },
      // The typed-document package is types only: the cruiser cannot resolve it to a file.
      to: { pathNot: ['^packages/client/', 'node_modules/(graphql|graphql-ws|graphql-sse|@graphql-typed-document-node/core)/', '^@graphql-typed-document-node/core$'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
