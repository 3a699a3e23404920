FROM node:20-bookworm-slim
WORKDIR /kvt
COPY package.json package-lock.json tsconfig.json ./
COPY proto ./proto
COPY server-kit ./server-kit
COPY controller ./controller
COPY segmentstore ./segmentstore
COPY client ./client
COPY bin ./bin
COPY bench ./bench
COPY scripts ./scripts
RUN npm install --no-audit --no-fund && npm prune --omit=dev
# Segment stores want these node flags (server-kit/node-flags.ts); the controller does not mind them.
ENTRYPOINT ["node", "--initial-old-space-size=128", "bin/kvt.js"]
