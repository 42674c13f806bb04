import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config';
import { createLogger } from '../logger';
import { physicalCollection } from '../retrieval/collection';
import { createRetrieval } from '../retrieval/create-retrieval';
import { formatSummary, ingestTree } from '../retrieval/ingest';
import { isRetrievalError } from '../retrieval/retrieval-error';
import { ProgressLine, progressWanted } from './ingest-progress';

const INGEST_TIMEOUT_MS = 120_000;

const USAGE =
  'usage: npm run ingest -- --path <dir> --repo <name> --collection <name> [--language <l>] [--org <id>]\n' +
  '  --language  recorded for every file instead of the one guessed from its extension\n' +
  '  --org       the org that owns the index; required unless RETRIEVAL_ORG_SCOPED_COLLECTIONS=false';

function parseArguments() {
  try {
    return parseArgs({
      options: {
        path: { type: 'string' },
        repo: { type: 'string' },
        collection: { type: 'string' },
        language: { type: 'string' },
        org: { type: 'string' },
      },
    }).values;
  } catch (e) {
    console.error((e as Error).message);
    return null;
  }
}

/**
 * `npm run ingest`: indexes a working tree into the vector store the gateway is configured
 * with (QDRANT_URL, else the embedded index under DATA_DIR), embedding with OpenAI when
 * OPENAI_API_KEY is set, else locally. Re-runs only embed what changed; CI runs it after
 * each commit ("index on commit").
 */
async function main(): Promise<number> {
  const values = parseArguments();
  if (!values?.path || !values.repo || !values.collection) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig();
  // Embedding a batch of chunks takes longer than embedding one question.
  const retrieval = createRetrieval(config, createLogger('warn'), { timeoutMs: Math.max(config.retrieval.timeoutMs, INGEST_TIMEOUT_MS) });
  // On a terminal, a progress line on stderr; in CI or piped, only the summary below.
  const progress = progressWanted({ stdoutIsTTY: process.stdout.isTTY === true, stderrIsTTY: process.stderr.isTTY === true, ci: config.ci })
    ? new ProgressLine(process.stderr)
    : null;
  try {
    const collection = physicalCollection(config.retrieval.orgScopedCollections, values.org ?? null, values.collection);
    const summary = await ingestTree(
      { store: retrieval.store, embedder: retrieval.embedder },
      {
        root: resolve(values.path),
        repo: values.repo,
        collection,
        language: values.language ?? null,
        ...(progress ? { onProgress: (p) => progress.update(p) } : {}),
      },
    );
    progress?.clear();
    console.log(
      `ingested ${values.repo} into ${collection} (${retrieval.description.store}, ${retrieval.description.embedder}): ${formatSummary(summary)}`,
    );
    return 0;
  } finally {
    progress?.clear();
    await retrieval.close();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (isRetrievalError(e) || e instanceof ConfigError) {
      console.error(`ingest failed: ${e.message}`);
      process.exit(isRetrievalError(e) && e.kind === 'bad-request' ? 2 : 1);
    }
    console.error(e);
    process.exit(1);
  },
);
