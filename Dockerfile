# syntax=docker/dockerfile:1

# Pinned Node 24 LTS base (package.json "engines": >=24); override with --build-arg NODE_IMAGE=…
# (both stages use it, so what npm installs is what runs).
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# ---- build: compile TypeScript, then keep only the production dependencies ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app

COPY package.json package-lock.json ./
# No dependency's install script runs, whatever npm version the base image ships: none is needed
# (package.json "allowScripts" declines them all). better-sqlite3 ships its native module built
# for Node-API, for every platform, so nothing is compiled and the stage needs no compilers.
# scripts/node-runtime is the Node 24 that npm installs only where npm runs on an older Node: on
# this base npm skips it (its "engines"), but its package.json must be there to be read.
COPY scripts/node-runtime/package.json ./scripts/node-runtime/
RUN npm ci --ignore-scripts --no-audit --no-fund

COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs scripts/build-console.mjs ./scripts/
COPY src ./src
# --omit=optional: the production dependencies' optional ones are the Node runtime above (its link)
# and pg-cloudflare (pg on Cloudflare Workers).
# geo-tz ships three boundary data sets; the service reads only the comprehensive one
# (geo-tz/all: src/geo/time-zones.ts and the time-zone migration), so the other two go (42 MB).
# better-sqlite3 ships its module for eight platforms and SQLite's C sources: only this one's
# build stays (linux-x64 or linux-arm64, glibc; about 26 MB less).
RUN npm run build \
 && npm prune --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
 && rm node_modules/geo-tz/data/timezones-1970.geojson.* node_modules/geo-tz/data/timezones-now.geojson.* \
 && find node_modules/better-sqlite3/prebuilds -type f ! -name "linux-$(node -p process.arch).node" -delete \
 && rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
 && node -e "new (require('better-sqlite3'))(':memory:').close()"

# ---- runtime ----
FROM ${NODE_IMAGE}

# tini as PID 1: forwards SIGTERM to Node (graceful shutdown) and reaps zombies.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# --max-old-space-size=256: V8 sizes its heap from the machine's memory where no container limit
# tells it otherwise, and lets garbage grow to 4 times the live heap before collecting it; 256 MB
# keeps that at 1.3 times (docs/performance.md, "What holds the resident set").
# --max-semi-space-size=8: Node 24's V8 grows the young generation to 128 MB under this service's
# load (Node 20's: 32 MB) and keeps it; 8 MB semi-spaces (a 16 MB young generation) hold RSS after
# the load at 267-286 MB instead of 381, for 3-5 % of the throughput (docs/performance.md,
# "Memory: Node 24's young generation").
# --expose-gc: gives the service V8's collector, with which each load of a search index of 10,000
# stores or more hands back the heap pages V8 keeps pooled, resident, until the process goes idle;
# without it a 100,000-row import beside searches got a 256 MiB pod killed. Given here at start-up
# it costs requests nothing measurable (set at run time it cost 10-24 % CPU); nothing else calls
# it (docs/performance.md, "V8's page pool, and the import within 256 MiB").
# NODE_OPTIONS set at run time replaces all three: keep them in it.
# MALLOC_MMAP_THRESHOLD_=131072: glibc maps every allocation of 128 KiB or more (the search
# index's buffers, the database driver's large packets) on its own and unmaps it when freed. Left
# to itself glibc raises that threshold to the largest block freed so far, after which a reloaded
# index's buffers come from the heap it never gives back past its top: 20-35 MB more resident
# after each reload, which a 256 MiB pod cannot spare (docs/performance.md, "V8's page pool,
# and the import within 256 MiB").
ENV NODE_ENV=production \
    DATA_DIR=/app/data \
    NODE_OPTIONS="--max-old-space-size=256 --max-semi-space-size=8 --expose-gc" \
    MALLOC_MMAP_THRESHOLD_=131072

# package.json is needed at run time: its "type": "module" makes dist/*.js ES modules.
COPY package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY assets ./assets

# The application files stay root-owned (read-only for the service); only the embedded
# SQLite directory is writable. Mount a volume here to keep its data. The service never writes
# anywhere else but /tmp, so the image also runs with a read-only root file system (Kubernetes'
# readOnlyRootFilesystem, `docker run --read-only --tmpfs /tmp`).
RUN mkdir -p /app/data && chown 1000:1000 /app/data
# The official images' `node` user, by number: Kubernetes' runAsNonRoot cannot verify a name.
USER 1000:1000

# 3000: the API (PORT). 9464: Prometheus metrics (METRICS_PORT), not for the public network.
EXPOSE 3000 9464
# The start period covers the database retry window (DB_STARTUP_TIMEOUT_MS, 60 s by default)
# plus the start itself: nothing listens before the database answers.
HEALTHCHECK --interval=30s --timeout=5s --start-period=90s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/live').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
STOPSIGNAL SIGTERM

ENTRYPOINT ["/usr/bin/tini", "--"]
# --import loads the OpenTelemetry bootstrap before the app (an ES module must be instrumented
# before it is first imported); it loads nothing unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
# No --enable-source-maps: Node then parses the source map of every module it loads, the
# dependencies' too (TypeORM ships one per file), and keeps them: 20-28 MB more resident memory
# at start-up (docs/performance.md, the same section). Stack traces name dist/*.js lines, which tsc
# writes one file per source file; dist/ still carries the .js.map files, and
# NODE_OPTIONS="--enable-source-maps ..." turns them on for a pod whose stack traces must name src/*.ts.
CMD ["node", "--import", "./dist/instrumentation.js", "dist/main.js"]
