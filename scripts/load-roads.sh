#!/usr/bin/env bash
# scripts/load-roads.sh <file.osm | file.osm.pbf> <database-url> [--schema NAME]
#
# Loads an OpenStreetMap extract's roads into PostgreSQL (PostGIS and pgRouting) for ROUTER=pgrouting:
# osm2pgrouting with its car profile (/usr/share/osm2pgrouting/mapconfig_for_cars.xml) writes its
# standard tables, `ways` (source, target, cost_s, reverse_cost_s, length_m, the_geom, …) and
# `ways_vertices_pgr`, in the schema NAME (default `roads`). See docs/routing.md.
#
#   <file.osm>        an OSM XML extract. A `.osm.pbf` (Geofabrik's state extracts are) is first cut
#                     down to its highways with osmium (Debian's osmium-tool), which also keeps
#                     osm2pgrouting's memory to the roads alone.
#   <database-url>    postgres://user[:password]@host[:port]/database. The database must exist; the
#                     postgis and pgrouting extensions are created in it when missing (which needs
#                     a user allowed to: a superuser, or the database's owner on PostgreSQL 13+
#                     for these trusted-by-packagers extensions where the server allows it).
#
# A service routing on the schema meanwhile keeps its answers: the extract is loaded into
# `<NAME>_next` and swapped in with two renames in one transaction, and the previous network is
# dropped after. A load that fails leaves the schema as it was. Needs psql and osm2pgrouting
# (Debian: postgresql-client, osm2pgrouting; the server needs postgresql-<major>-pgrouting).
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

schema=roads
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --schema)
      [ $# -ge 2 ] || usage
      schema=$2
      shift 2
      ;;
    -h | --help) usage ;;
    *)
      args+=("$1")
      shift
      ;;
  esac
done
[ ${#args[@]} -eq 2 ] || usage
file=${args[0]} url=${args[1]}

fail() {
  echo "load-roads.sh: $*" >&2
  exit 1
}

[[ "$schema" =~ ^[a-z_][a-z0-9_]{0,50}$ ]] || fail "--schema must be a plain lower-case name (letters, digits, _), not \"$schema\""
[ -r "$file" ] || fail "cannot read $file"
command -v osm2pgrouting >/dev/null || fail "osm2pgrouting is not installed (Debian: apt-get install osm2pgrouting)"
command -v psql >/dev/null || fail "psql is not installed (Debian: apt-get install postgresql-client)"

# postgres://user[:password]@host[:port]/database, as libpq reads it; osm2pgrouting takes the parts.
re='^postgres(ql)?://([^:@/]+)(:([^@/]*))?@([^:/?]+)(:([0-9]+))?/([^/?]+)$'
[[ "$url" =~ $re ]] || fail "the database URL must look like postgres://user[:password]@host[:port]/database"
user=${BASH_REMATCH[2]} password=${BASH_REMATCH[4]} host=${BASH_REMATCH[5]} port=${BASH_REMATCH[7]:-5432} database=${BASH_REMATCH[8]}
decode() { printf '%b' "${1//%/\\x}"; }
user=$(decode "$user") password=$(decode "$password") database=$(decode "$database")
export PGHOST=$host PGPORT=$port PGUSER=$user PGDATABASE=$database
[ -z "$password" ] || export PGPASSWORD=$password

# NOTICEs ("extension already exists, skipping") are not news to the operator.
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
sql() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }

started=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

osm=$file
if [[ "$file" == *.pbf ]]; then
  command -v osmium >/dev/null || fail "a .pbf extract needs osmium to read it (Debian: apt-get install osmium-tool)"
  echo "keeping the highways of $file (osmium tags-filter)"
  osmium tags-filter --overwrite --no-progress -o "$work/roads.osm" "$file" w/highway
  osm=$work/roads.osm
fi

sql -c 'SELECT 1' >/dev/null || fail "cannot connect to $host:$port/$database as $user"
sql -c 'CREATE EXTENSION IF NOT EXISTS postgis; CREATE EXTENSION IF NOT EXISTS pgrouting;' ||
  fail "could not create the postgis and pgrouting extensions in $database (the server needs PostGIS and pgRouting installed: Debian's postgresql-<major>-postgis-3 and postgresql-<major>-pgrouting)"

next=${schema}_next old=${schema}_old
sql -c "DROP SCHEMA IF EXISTS $next CASCADE; CREATE SCHEMA $next;"
echo "loading $file into $database, schema $next (osm2pgrouting, car profile)"
conf=${OSM2PGROUTING_CONF:-/usr/share/osm2pgrouting/mapconfig_for_cars.xml}
osm2pgrouting_args=(--file "$osm" --conf "$conf" --dbname "$database" --username "$user" --host "$host" --port "$port" --schema "$next" --clean)
[ -z "$password" ] || osm2pgrouting_args+=(--password "$password")
if ! osm2pgrouting "${osm2pgrouting_args[@]}" >"$work/osm2pgrouting.log" 2>&1; then
  tail -n 20 "$work/osm2pgrouting.log" >&2
  sql -c "DROP SCHEMA IF EXISTS $next CASCADE"
  fail "osm2pgrouting failed; $schema is unchanged"
fi
ways=$(sql -c "SELECT count(*) FROM $next.ways")
[ "$ways" -gt 0 ] || {
  sql -c "DROP SCHEMA IF EXISTS $next CASCADE"
  fail "$file has no road osm2pgrouting's car profile takes; $schema is unchanged"
}
# The look-ups the router makes: the ways near a point (osm2pgrouting indexes the_geom) and a
# way's ends; then fresh statistics for the planner.
sql -c "CREATE INDEX ON $next.ways (source); CREATE INDEX ON $next.ways (target); ANALYZE $next.ways; ANALYZE $next.ways_vertices_pgr;"
sql <<SQL
BEGIN;
DROP SCHEMA IF EXISTS $old CASCADE;
DO \$\$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = '$schema') THEN
    EXECUTE 'ALTER SCHEMA $schema RENAME TO $old';
  END IF;
END \$\$;
ALTER SCHEMA $next RENAME TO $schema;
COMMIT;
DROP SCHEMA IF EXISTS $old CASCADE;
SQL
vertices=$(sql -c "SELECT count(*) FROM $schema.ways_vertices_pgr")
echo "loaded $ways ways and $vertices vertices into $database, schema $schema, in $(($(date +%s) - started)) s"
