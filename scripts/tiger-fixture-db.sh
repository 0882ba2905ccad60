#!/usr/bin/env bash
# scripts/tiger-fixture-db.sh create | drop <name or URL> | cleanup [--all] | check
#
# Throw-away PostgreSQL databases holding scripts/tiger-fixture.sql (PostGIS, its TIGER geocoder
# and a small synthetic TIGER data set) for the geocoder tests; one per test file.
#
#   create          makes a new database and prints its URL, postgres://postgres@127.0.0.1:5432/<name>
#                   (the one line on stdout). The first call builds a template database from
#                   scripts/tiger-fixture.sql (about 2 s); later calls copy it (a fraction of a second).
#   drop NAME|URL   drops that database, closing any connection still open to it.
#   cleanup         drops every database `create` made, and templates of older fixtures.
#   cleanup --all   also drops the current template (the next `create` builds it again).
#   check           makes a database, geocodes sample addresses on it (the service's query and
#                   session settings) against the points and ratings the fixture should give, times
#                   geocode() (median of 20 warm calls), drops the database; exit 1 on a mismatch.
#
# The server: PGHOST (127.0.0.1), PGPORT (5432), PGUSER (postgres), as psql reads them; the user
# must be allowed to create databases and extensions (trust auth as postgres on a test machine;
# a PGPASSWORD goes into the printed URL as it is, so keep it free of URL-special characters).
#
# The copies have NO database-level search_path: CREATE EXTENSION postgis_tiger_geocoder sets one
# (ALTER DATABASE ... SET search_path) on the database it runs in, and a copy made from a template
# does not inherit it. A client must set `search_path = public, tiger` for its session (the pg
# option `options: '-c search_path=public,tiger'`), as the service does; see docs/geocoding-tiger.md.
#
# Safe to run from several test processes at once: the template is built under a name of its own
# and renamed into place (the loser of a race drops its copy), it refuses connections so that
# copying it never meets "source database is being accessed by other users", and that error is
# retried anyway.
set -euo pipefail

export PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres}
FIXTURE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tiger-fixture.sql"
PREFIX=tiger_fixture

psql_admin() {
  psql -X -q -v ON_ERROR_STOP=1 -d postgres "$@"
}

sql_value() {
  psql_admin -At -c "$1"
}

# The template's name changes with the fixture and with the installed PostGIS.
template_name() {
  local versions
  versions=$(sql_value "SELECT string_agg(name || '=' || default_version, ',' ORDER BY name) FROM pg_available_extensions WHERE name IN ('postgis', 'postgis_tiger_geocoder', 'fuzzystrmatch')")
  case "$versions" in
    *postgis_tiger_geocoder=*) ;;
    *)
      echo "tiger-fixture-db.sh: the server ($PGHOST:$PGPORT) has no postgis_tiger_geocoder extension: sudo scripts/install-test-tools.sh" >&2
      exit 1
      ;;
  esac
  echo "${PREFIX}_tpl_$( (cat "$FIXTURE"; echo "$versions") | sha256sum | cut -c1-12)"
}

db_exists() {
  [ "$(sql_value "SELECT count(*) FROM pg_database WHERE datname = '$1'")" = 1 ]
}

ensure_template() {
  local template=$1 build
  db_exists "$template" && return 0
  build="${PREFIX}_build_$$_${RANDOM}"
  psql_admin -c "CREATE DATABASE $build"
  if ! psql -X -q -v ON_ERROR_STOP=1 -d "$build" -f "$FIXTURE" >/dev/null; then
    psql_admin -c "DROP DATABASE IF EXISTS $build WITH (FORCE)"
    echo "tiger-fixture-db.sh: loading $FIXTURE failed" >&2
    exit 1
  fi
  psql_admin -c "ALTER DATABASE $build ALLOW_CONNECTIONS false"
  # Another process may have won the race meanwhile: then its template stays and this copy goes.
  if ! psql_admin -c "ALTER DATABASE $build RENAME TO $template" 2>/dev/null; then
    psql_admin -c "DROP DATABASE IF EXISTS $build WITH (FORCE)"
    db_exists "$template" || { echo "tiger-fixture-db.sh: could not make the template $template" >&2; exit 1; }
  fi
}

create() {
  local template name attempt err
  template=$(template_name)
  ensure_template "$template"
  name="${PREFIX}_t_$(date +%s%N | cut -c8-16)_$$_${RANDOM}"
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    if err=$(psql_admin -c "CREATE DATABASE $name TEMPLATE $template" 2>&1); then
      echo "postgres://${PGUSER}${PGPASSWORD:+:$PGPASSWORD}@${PGHOST}:${PGPORT}/${name}"
      return 0
    fi
    case "$err" in
      *"is being accessed by other users"*) sleep 0.$((RANDOM % 5 + 1)) ;;
      *) break ;;
    esac
  done
  echo "tiger-fixture-db.sh: CREATE DATABASE $name TEMPLATE $template failed (attempt $attempt): $err" >&2
  exit 1
}

drop() {
  local name=${1##*/}
  name=${name%%\?*}
  case "$name" in
    "${PREFIX}"_t_*) ;;
    *)
      echo "tiger-fixture-db.sh: drop only drops databases that create made (${PREFIX}_t_...), not '$name'" >&2
      exit 2
      ;;
  esac
  psql_admin -c "DROP DATABASE IF EXISTS $name WITH (FORCE)"
}

cleanup() {
  local keep="" db
  if [ "${1:-}" != --all ]; then keep=$(template_name); fi
  for db in $(sql_value "SELECT datname FROM pg_database WHERE datname LIKE '${PREFIX}\\_%' ORDER BY datname"); do
    [ "$db" = "$keep" ] && continue
    echo "dropping $db" >&2
    psql_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
  done
}

# The service's query, with the session setting it needs, on sample addresses of the fixture:
# the rating and point (7 decimals, NAD 83 lng/lat) geocode() must give for each.
check_url=
check() {
  check_url=$(create)
  trap 'drop "$check_url" >/dev/null' EXIT
  echo "checking $check_url" >&2
  PGOPTIONS='-c search_path=public,tiger' psql -X -q -v ON_ERROR_STOP=1 -d "$check_url" <<'SQL'
CREATE TEMPORARY TABLE expected (address text, rating int, lat numeric, lng numeric, zip text, state text);
INSERT INTO expected VALUES
  ('100 Main St, Springfield, IL 62701',    0, 39.8102100, -89.6394000, '62701', 'IL'),
  ('120 Main St, Springfield, IL 62701',    0, 39.8102100, -89.6388898, '62701', 'IL'),
  ('121 Main St, Springfield, IL 62701',    0, 39.8103900, -89.6388898, '62701', 'IL'),
  ('150 E Adams St, Springfield, IL 62701', 0, 39.8152100, -89.6381245, '62701', 'IL'),
  ('250 Oak Ave, Austin, TX 78701',         0, 30.2844755, -97.7280960, '78701', 'TX'),
  ('251 Oak Ave, Austin, TX 78701',         0, 30.2844755, -97.7283040, '78701', 'TX'),
  ('235 W 26th St, New York, NY 10001',     0, 40.7656901, -73.9838327, '10001', 'NY'),
  ('120 Main St, New York, NY 10001',       0, 40.7605099, -73.9866898, '10001', 'NY'),
  -- no such street: the ZIP code's centroid, rating 100
  ('120 Zebra Ln, Springfield, IL 62701', 100, 39.8003000, -89.6494000, '62701', 'IL');

CREATE TEMPORARY TABLE got AS
SELECT e.address, g.rating, ST_Y(g.geomout) AS lat, ST_X(g.geomout) AS lng, (g.addy).zip AS zip, (g.addy).stateabbrev AS state
  FROM expected e LEFT JOIN LATERAL geocode(e.address, 1) AS g ON true;

SELECT e.address, g.rating, round(g.lat::numeric, 7) AS lat, round(g.lng::numeric, 7) AS lng, g.zip, g.state,
       CASE WHEN g.rating = e.rating AND abs(g.lat - e.lat) < 1e-6 AND abs(g.lng - e.lng) < 1e-6
                 AND g.zip = e.zip AND g.state = e.state THEN 'ok'
            ELSE format('WRONG: expected %s at %s, %s', e.rating, e.lat, e.lng) END AS result
  FROM expected e JOIN got g USING (address) ORDER BY e.address;

CREATE TEMPORARY TABLE timing (ms float8);
DO $$
DECLARE i int; t0 timestamptz; r record;
BEGIN
  FOR i IN 1..25 LOOP
    t0 := clock_timestamp();
    SELECT g.rating INTO r FROM geocode('120 Main St, Springfield, IL 62701', 1) AS g;
    IF i > 5 THEN INSERT INTO timing VALUES (extract(epoch FROM clock_timestamp() - t0) * 1000); END IF;
  END LOOP;
END $$;
SELECT 'one geocode() call, warm: median of ' || count(*) || ' ' || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1)
       || ' ms (slowest ' || round(max(ms)::numeric, 1) || ' ms)' AS timing FROM timing;

DO $$
BEGIN
  IF EXISTS (SELECT FROM expected e LEFT JOIN got g USING (address)
              WHERE g.rating IS DISTINCT FROM e.rating OR NOT abs(g.lat - e.lat) < 1e-6 OR NOT abs(g.lng - e.lng) < 1e-6
                 OR g.zip IS DISTINCT FROM e.zip OR g.state IS DISTINCT FROM e.state) THEN
    RAISE EXCEPTION 'the TIGER fixture does not geocode as expected (see the table above)';
  END IF;
END $$;
SQL
  echo "tiger fixture: geocodes as expected" >&2
}

case "${1:-}" in
  create) create ;;
  check) check ;;
  drop)
    [ $# -eq 2 ] || { echo "usage: $0 drop <name or URL>" >&2; exit 2; }
    drop "$2"
    ;;
  cleanup) cleanup "${2:-}" ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' ;;
  *)
    echo "usage: $0 create | drop <name or URL> | cleanup [--all] | check  (see --help)" >&2
    exit 2
    ;;
esac
