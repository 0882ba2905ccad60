#!/usr/bin/env bash
# scripts/install-test-tools.sh [--browser] [--cluster] [--k8s] [--all] [--check]
#
# The programs the tests need beyond `npm ci`, from Debian's packages (Debian 12 or later, or
# Ubuntu). The one step before `npm test` on a fresh machine (README, Quick start); `.ci/run`
# calls it too, so the two cannot drift. Idempotent: it installs only what is missing, and runs
# `apt-get update` only then. Installing needs root (run it with sudo); with nothing missing it
# runs as anyone.
#
#   (no flag)   what `npm test` needs:
#                 nats-server    the change-event specs start brokers of their own
#                 prometheus     test/prometheus.e2e-spec.ts scrapes the service with it
#                 openssl        the database TLS specs make their certificates with it
#                 mariadbd       (mariadb-server) the outage and TLS specs start servers of their own
#                 redis-server   test/multi-instance.e2e-spec.ts starts one of its own
#                 postgres, psql (postgresql, postgresql-client) and PostGIS's TIGER geocoder
#                                (postgresql-<major>-postgis-3): the geocoder specs' databases
#                                (scripts/tiger-fixture-db.sh), on a server running on
#                                127.0.0.1:5432 (`.ci/run` starts it). <major> is the one installed
#                                (/usr/lib/postgresql/<major>, as pg_ctlcluster finds it); with none,
#                                Debian's default, known once `postgresql` is installed.
#                 osm2pgrouting, osmium (osmium-tool) and pgRouting (postgresql-<major>-pgrouting):
#                                scripts/load-roads.sh and its spec (test/roads.e2e-spec.ts)
#   --browser   also Chromium, for `npm run test:browser`
#   --cluster   also galera-4, rsync and iproute2 (ss), for `npm run test:cluster`
#   --k8s       also kubectl (kubernetes-client), for `npm run k8s:check`
#   --all       all of the above
#   --check     install nothing: list what is missing and exit 1 if anything is (the e2e specs'
#               global set-up runs this before every `npm test`, so a missing program stops the
#               run at once with this script's name rather than failing or skipping specs later)
#
# NATS_SERVER and REDIS_SERVER name programs elsewhere (as the specs honour them too).
set -euo pipefail

browser=false cluster=false k8s=false check=false
for arg in "$@"; do
  case "$arg" in
    --browser) browser=true ;;
    --cluster) cluster=true ;;
    --k8s) k8s=true ;;
    --all) browser=true cluster=true k8s=true ;;
    --check) check=true ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "install-test-tools.sh: unknown argument $arg (see --help)" >&2
      exit 2
      ;;
  esac
done

# "package|what shows it is installed": a program on PATH (or an absolute path).
wanted=(
  "nats-server|${NATS_SERVER:-/usr/sbin/nats-server}"
  "prometheus|prometheus"
  "openssl|openssl"
  "mariadb-server|mariadbd"
  "mariadb-server|mariadb-install-db"
  "redis-server|${REDIS_SERVER:-redis-server}"
)
# PostgreSQL and PostGIS (its TIGER geocoder extension): Debian names PostGIS after the server's
# major version, so it is the major installed, the highest if several; with none, the packages of
# Debian's default major, resolved once `postgresql` is in (MAJOR below).
pg_major=$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n 1)
wanted+=(
  "postgresql${pg_major:+-$pg_major}|/usr/lib/postgresql/${pg_major:-MAJOR}/bin/postgres"
  "postgresql-client|psql"
  "postgresql-${pg_major:-MAJOR}-postgis-3|/usr/share/postgresql/${pg_major:-MAJOR}/extension/postgis_tiger_geocoder.control"
  "postgresql-${pg_major:-MAJOR}-pgrouting|/usr/share/postgresql/${pg_major:-MAJOR}/extension/pgrouting.control"
  "osm2pgrouting|osm2pgrouting"
  "osmium-tool|osmium"
)
if $browser; then wanted+=("chromium|chromium"); fi
if $cluster; then wanted+=("galera-4|/usr/lib/galera/libgalera_smm.so" "rsync|rsync" "iproute2|ss"); fi
if $k8s; then wanted+=("kubernetes-client|kubectl"); fi

present() {
  case "$1" in
    /*) [ -e "$1" ] ;;
    *) command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ] ;;
  esac
}

missing=()
for entry in "${wanted[@]}"; do
  package=${entry%%|*} program=${entry#*|}
  if ! present "$program"; then
    echo "missing: $program (Debian package $package)"
    [[ " ${missing[*]} " == *" $package "* ]] || missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "test tools: all present (${#wanted[@]} checked)"
  exit 0
fi
if $check; then
  flags=()
  for arg in "$@"; do [ "$arg" = --check ] || flags+=("$arg"); done
  echo "install them with: sudo scripts/install-test-tools.sh${flags[*]:+ ${flags[*]}}" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-test-tools.sh: installing ${missing[*]} needs root: sudo $0 $*" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
# Chromium with its recommended packages (fonts among them), as `.ci/run` always installed it.
plain=() recommended=()
for package in "${missing[@]}"; do
  if [ "$package" = chromium ]; then recommended+=("$package"); else plain+=("$package"); fi
done
# PostGIS for a server this run installs: its package name waits for the major (MAJOR above).
later=()
for package in "${plain[@]}"; do [[ "$package" == *MAJOR* ]] && later+=("$package"); done
if [ ${#later[@]} -gt 0 ]; then
  kept=()
  for package in "${plain[@]}"; do [[ "$package" == *MAJOR* ]] || kept+=("$package"); done
  plain=("${kept[@]}")
fi
if [ ${#plain[@]} -gt 0 ]; then apt-get install -y --no-install-recommends "${plain[@]}"; fi
if [ ${#later[@]} -gt 0 ]; then
  pg_major=$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n 1)
  if [ -z "$pg_major" ]; then
    echo "install-test-tools.sh: no PostgreSQL under /usr/lib/postgresql after installing postgresql" >&2
    exit 1
  fi
  apt-get install -y --no-install-recommends "${later[@]//MAJOR/$pg_major}"
  for i in "${!wanted[@]}"; do wanted[i]=${wanted[i]//MAJOR/$pg_major}; done
fi
if [ ${#recommended[@]} -gt 0 ]; then apt-get install -y "${recommended[@]}"; fi

# Installing a server package may start it as a system service (mariadb-server and redis-server
# do on a machine with systemd): the tests start their own on spare ports and need none of them.
for entry in "${wanted[@]}"; do
  program=${entry#*|}
  if ! present "$program"; then
    echo "install-test-tools.sh: $program is still missing after installing ${missing[*]}" >&2
    exit 1
  fi
done
echo "test tools: installed ${missing[*]//MAJOR/${pg_major:-MAJOR}}"
