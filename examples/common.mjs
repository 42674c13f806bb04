// Shared by the examples: where the gateway is, the token, and one GraphQL call over fetch.
export const GATEWAY_URL = process.env.GATEWAY_URL ?? 'http://localhost:4000/graphql';
export const TOKEN = process.env.TOKEN;
if (!TOKEN) {
  console.error('set TOKEN first: export TOKEN=$(npm run --silent token -- --user user-2 --org acme)');
  process.exit(1);
}

/** POSTs one operation; throws with the gateway's error code when it answers with errors. */
export async function graphql(query, variables = {}) {
  const res = await fetch(GATEWAY_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors?.length) {
    const [first] = body.errors;
    throw new Error(`${first.extensions?.code ?? res.status}: ${first.message}`);
  }
  return body.data;
}

/** The first agent context of the caller's organisation (`npm run seed` makes two). */
export async function firstAgentContextId() {
  const { agentContexts } = await graphql('{ agentContexts { id name } }');
  if (agentContexts.length === 0) throw new Error('no agent context yet: run `npm run seed` (or upsertAgentContext as an admin)');
  return agentContexts[0].id;
}
