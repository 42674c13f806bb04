// A client tool round trip: the conversation context offers the model a `read_file` tool that
// THIS script runs. execute answers AgentToolContinuation when the model wants it; the script
// reads the file and continues the same turn with toolResults until the final answer comes.
// Needs an admin token once (to create the context) and a model (OPENAI_API_KEY on the gateway;
// the offline answer never calls tools):
//   node examples/tool-round-trip.mjs "What is the project called? Read package.json."
import { readFile } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { firstAgentContextId, graphql } from './common.mjs';

const READ_FILE = {
  name: 'read_file',
  description: 'Reads a UTF-8 text file of the workspace, by its path relative to the workspace root.',
  parametersJson: JSON.stringify({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
};
const CONTEXT_NAME = 'examples: read_file';

const EXECUTE = `mutation Execute($input: AgentExecuteInput!) {
  execute(input: $input) {
    __typename
    ... on AgentFinalResponse { sessionId turnId primaryOutputText }
    ... on AgentToolContinuation { sessionId turnId toolCalls { toolCallId name argumentsJson } }
  }
}`;

async function conversationContextId() {
  const { conversationContexts } = await graphql('{ conversationContexts { id name } }');
  const existing = conversationContexts.find((c) => c.name === CONTEXT_NAME);
  if (existing) return existing.id;
  const { upsertConversationContext } = await graphql(
    'mutation UpsertConversationContext($input: ConversationContextInput!) { upsertConversationContext(input: $input) { id } }',
    { input: { name: CONTEXT_NAME, systemPrompt: 'Answer questions about the workspace; read files with read_file.', tools: [READ_FILE] } },
  );
  return upsertConversationContext.id;
}

/** Runs one tool call here, on the client: only files under the current directory. */
async function run(call) {
  const started = Date.now();
  try {
    if (call.name !== READ_FILE.name) throw new Error(`unknown tool ${call.name}`);
    const { path } = JSON.parse(call.argumentsJson);
    const file = resolve(path);
    if (!file.startsWith(process.cwd() + sep)) throw new Error('only files of the workspace');
    const content = await readFile(file, 'utf8');
    return { toolCallId: call.toolCallId, resultJson: JSON.stringify({ content: content.slice(0, 20_000) }), executionMs: Date.now() - started };
  } catch (e) {
    return { toolCallId: call.toolCallId, errorMessage: e.message, executionMs: Date.now() - started };
  }
}

const agentContextId = await firstAgentContextId();
const instruction = process.argv[2] ?? 'What is the project called? Read package.json.';
let { execute } = await graphql(EXECUTE, { input: { agentContextId, conversationContextId: await conversationContextId(), instruction, sessionName: 'examples/tool-round-trip.mjs' } });
while (execute.__typename === 'AgentToolContinuation') {
  for (const call of execute.toolCalls) console.log(`the model asks for ${call.name}(${call.argumentsJson})`);
  const toolResults = await Promise.all(execute.toolCalls.map(run));
  ({ execute } = await graphql(EXECUTE, { input: { agentContextId, sessionId: execute.sessionId, turnId: execute.turnId, toolResults } }));
}
console.log(`final answer of turn ${execute.turnId}:`);
console.log(execute.primaryOutputText);
