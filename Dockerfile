# Node 22 LTS (Node 20 left maintenance in April 2026); package.json `engines` lists what runs.
# Build stage: native modules (better-sqlite3) compile here, and the dashboard is bundled.
FROM node:22-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# The typed client is a workspace package (packages/client): npm ci needs its manifest, the build its sources.
COPY packages/client/package.json ./packages/client/
RUN npm ci
COPY tsconfig.json tsconfig.build.json tsconfig.web.json ./
COPY scripts ./scripts
COPY packages/client ./packages/client
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
ENV NODE_ENV=production PORT=4000 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 4000
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD node -e "fetch('http://127.0.0.1:4000/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/main.js"]
