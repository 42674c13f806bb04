// The execute mutation answers a union: the final answer, or the client tools the model wants
// run first. One fragment per member: node examples/execute.mjs "Explain the retry policy"
import { firstAgentContextId, graphql } from './common.mjs';

const EXECUTE = `mutation Execute($input: AgentExecuteInput!) {
  execute(input: $input) {
    __typename
    ...Final
    ...NeedsTools
  }
}
fragment Final on AgentFinalResponse {
  sessionId turnId primaryOutputText userWarnings
  usage { totalTokens estimatedCostUsd }
}
fragment NeedsTools on AgentToolContinuation {
  sessionId turnId toolContinuationMessage
  toolCalls { toolCallId name argumentsJson }
}`;

const instruction = process.argv[2] ?? 'Summarise what this repository does.';
const { execute } = await graphql(EXECUTE, { input: { agentContextId: await firstAgentContextId(), instruction, sessionName: 'examples/execute.mjs' } });
switch (execute.__typename) {
  case 'AgentFinalResponse':
    console.log(`turn ${execute.turnId} of session ${execute.sessionId} answered (${execute.usage?.totalTokens ?? '?'} tokens):`);
    console.log(execute.primaryOutputText);
    break;
  case 'AgentToolContinuation':
    console.log(`turn ${execute.turnId} waits for client tools: ${execute.toolCalls.map((c) => c.name).join(', ')}`);
    console.log('answer them with execute(input: { sessionId, turnId, toolResults: [...] })');
    break;
  default:
    throw new Error(`unexpected answer ${execute.__typename}`);
}
