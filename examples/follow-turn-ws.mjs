// Starts a turn with executeAsync and follows its answer as it streams, over WebSocket, with
// the typed client package (agent-session-gateway-client, packages/client):
//   node examples/follow-turn-ws.mjs "Explain the retry policy"
import { createGatewayClient, ExecuteAsyncDocument, TurnOutputDocument } from 'agent-session-gateway-client';
import { firstAgentContextId, GATEWAY_URL, TOKEN } from './common.mjs';

// Node 22+ and browsers have a WebSocket; Node 20 takes the one from the `ws` package.
const webSocketImpl = globalThis.WebSocket ?? (await import('ws')).default;
const client = createGatewayClient({ url: GATEWAY_URL, token: TOKEN, webSocketImpl });

const instruction = process.argv[2] ?? 'Summarise what this repository does.';
const { executeAsync } = await client.mutate(ExecuteAsyncDocument, {
  input: { agentContextId: await firstAgentContextId(), instruction, sessionName: 'examples/follow-turn-ws.mjs' },
});
console.log(`turn ${executeAsync.turnId} started; its answer:`);
await new Promise((resolve, reject) => {
  client.subscribe(TurnOutputDocument, { sessionId: executeAsync.sessionId, turnId: executeAsync.turnId }, {
    next: ({ turnOutput }) => process.stdout.write(turnOutput.textDelta),
    error: reject,
    // The stream completes when the turn leaves PENDING.
    complete: resolve,
  });
});
console.log('\n(turn finished)');
await client.dispose();
