# kvt in a container: `kvt controller`, `kvt segmentstore` or any other kvt command (docker-compose.yml
# runs a cluster). Built from a clean checkout in two stages:
#   build:   installs exactly what package-lock.json pins (dev dependencies too, for the TypeScript
#            compiler), builds dist/, then prunes the dev dependencies away;
#   runtime: only the built code, the .proto files it loads and the production node_modules, run as the
#            image's unprivileged `node` user (uid 1000).
# (`npm install` with the lock, not `npm ci`: npm 11 leaves other platforms' optional packages out of
# the lock and then refuses it as out of sync; with the lock present both install the same tree.)

FROM node:20-bookworm-slim AS build
WORKDIR /kvt
COPY package.json package-lock.json tsconfig.json ./
COPY proto ./proto
COPY server-kit ./server-kit
COPY controller ./controller
COPY segmentstore ./segmentstore
COPY client ./client
COPY couch ./couch
COPY bin ./bin
COPY bench ./bench
COPY scripts ./scripts
# `prepare` builds dist/ as part of the install.
RUN npm install --no-audit --no-fund \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /kvt
COPY --from=build /kvt/package.json ./package.json
COPY --from=build /kvt/node_modules ./node_modules
COPY --from=build /kvt/dist ./dist
COPY --from=build /kvt/proto/kvt ./proto/kvt
COPY --from=build /kvt/bin/kvt.js ./bin/kvt.js
# The data directories the compose file mounts its volumes on, owned by the user the processes run as
# (a new named volume takes the ownership of the directory it is mounted on).
RUN mkdir -p /data/controller /data/segmentstore && chown -R node:node /data
USER node
# gRPC (controller, segment store), Prometheus metrics, the controller's status page.
EXPOSE 9090 12345 9100 9101 8080
# Segment stores want these node flags (server-kit/node-flags.ts); the controller does not mind them.
ENTRYPOINT ["node", "--initial-old-space-size=128", "bin/kvt.js"]
