// A page of sessions, then the next one by cursor: node examples/list-sessions.mjs [pageSize]
import { graphql } from './common.mjs';

const SESSIONS = `query Sessions($first: Int!, $after: String) {
  agentSessions(first: $first, after: $after, orderBy: LAST_UPDATED_DESC) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { id name lastTurnStatus turnCount ownerUser { text } } }
  }
}`;

const first = Number(process.argv[2] ?? 5);
let after = null;
for (let page = 1; page <= 2; page++) {
  const { agentSessions } = await graphql(SESSIONS, { first, after });
  console.log(`page ${page} of ${agentSessions.totalCount} sessions:`);
  for (const { node } of agentSessions.edges) {
    console.log(`  ${node.name} (${node.ownerUser.text}, ${node.turnCount} turns, last ${node.lastTurnStatus ?? 'none'})`);
  }
  if (!agentSessions.pageInfo.hasNextPage) break;
  after = agentSessions.pageInfo.endCursor;
}
