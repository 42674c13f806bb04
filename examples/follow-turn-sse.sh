#!/bin/sh
# Starts a turn with executeAsync and follows its answer over Server-Sent Events with curl
# alone (graphql-sse's distinct-connections mode: one POST, one event stream):
#   TOKEN=$(npm run --silent token -- --user user-2 --org acme) sh examples/follow-turn-sse.sh
set -eu
GATEWAY_URL=${GATEWAY_URL:-http://localhost:4000/graphql}
: "${TOKEN:?set TOKEN first: export TOKEN=\$(npm run --silent token -- --user user-2 --org acme)}"
json() { node -pe "JSON.parse(require('fs').readFileSync(0, 'utf8')).$1"; }
gql() { curl -sS "$GATEWAY_URL" -H 'content-type: application/json' -H "authorization: Bearer $TOKEN" -d "$1"; }

AGENT=$(gql '{"query":"{ agentContexts { id } }"}' | json 'data.agentContexts[0].id')
STARTED=$(gql "{\"query\":\"mutation(\$input: AgentExecuteInput!) { executeAsync(input: \$input) { sessionId turnId } }\",\"variables\":{\"input\":{\"agentContextId\":\"$AGENT\",\"instruction\":\"Summarise what this repository does.\",\"sessionName\":\"examples/follow-turn-sse.sh\"}}}")
SESSION=$(echo "$STARTED" | json 'data.executeAsync.sessionId')
TURN=$(echo "$STARTED" | json 'data.executeAsync.turnId')
echo "turn $TURN started; its answer as events:"

# Each `event: next` carries one delta; `event: complete` ends the stream when the turn leaves PENDING.
curl -sS -N "$GATEWAY_URL/stream" \
  -H 'content-type: application/json' -H 'accept: text/event-stream' -H "authorization: Bearer $TOKEN" \
  -d "{\"query\":\"subscription(\$s: ID!, \$t: ID!) { turnOutput(sessionId: \$s, turnId: \$t) { index textDelta } }\",\"variables\":{\"s\":\"$SESSION\",\"t\":\"$TURN\"}}"
