-- scripts/tiger-fixture.sql: a small synthetic TIGER data set for the geocoder tests.
--
-- Run against an EMPTY database (scripts/tiger-fixture-db.sh does, and makes a throw-away
-- database from it per test file):
--
--   psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -U postgres -d <empty db> -f scripts/tiger-fixture.sql
--
-- Plain SQL, no psql commands, so a `pg` client can run it as one multi-statement query too.
-- Needs PostGIS's extensions from Debian's postgresql-<major>-postgis-3(-scripts) packages;
-- nothing is downloaded.
--
-- Three real ZIP codes, with made-up streets placed about 1-1.5 miles north-east of each ZIP's
-- centroid, so a test can tell a street match (rating 0 for an exact one) from the ZIP centroid
-- that geocode() falls back to for an unknown street (rating 100). The tables are laid out the
-- way PostGIS's loader (Loader_Generate_Script) lays them out: per-state child tables in schema
-- tiger_data that INHERIT from the parent tables in schema tiger that geocode() reads.
--
-- Streets (every city the same shape; O = the city's origin, below; a block is 0.0025 degrees):
--   Main St      west to east along lat O.lat, from lng O.lng, 3 blocks: 100-198, 200-298, 300-398
--   Oak Ave      south to north along lng O.lng + 0.005, from lat O.lat, 3 blocks: 100-398
--   <3rd street> west to east along lat O.lat + 0.005, from lng O.lng, 2 blocks: 100-298
--                (W 26th St in New York, E 6th St in Austin, E Adams St in Springfield)
-- Each block is one TIGER edge (one tlid) with both sides addressed: even numbers on the right
-- (south of an eastbound street, east of a northbound one), odd numbers on the left, each side
-- running with the edge (block 100: right 100-198, left 101-199).
--
--   city         state  county (fips)     zip    ZIP centroid (lat, lng)   origin O (lat, lng)
--   New York     NY 36  New York (061)    10001  40.7506, -73.9972         40.7606, -73.9872
--   Austin       TX 48  Travis (453)      78701  30.2707, -97.7432         30.2807, -97.7332
--   Springfield  IL 17  Sangamon (167)    62701  39.8003, -89.6494         39.8103, -89.6394
--
-- geocode() puts a house number at its fraction along the block's edge, (n - from) / (to - from),
-- measured in the edge's UTM zone, then 10 m to that number's side of the street.

CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS fuzzystrmatch;
CREATE EXTENSION IF NOT EXISTS postgis_tiger_geocoder; -- creates schemas tiger and tiger_data

-- The extension's functions name their tables without a schema: they need tiger (and public,
-- for PostGIS and fuzzystrmatch) on the search_path of the session that calls them.
SET search_path = public, tiger;

BEGIN;

-- The fixture's description, in temporary tables; the DO block below loads it into the loader's tables.

CREATE TEMPORARY TABLE fixture_city (
  statefp text, stusps text, state_name text,
  countyfp text, county_name text,
  placefp text, place_name text,
  cousubfp text, cousub_name text,
  zip text, zip_lat numeric, zip_lng numeric, -- the real ZIP code's centroid
  lat numeric, lng numeric                   -- origin O of the streets
) ON COMMIT DROP;

INSERT INTO fixture_city VALUES
  ('36', 'NY', 'New York', '061', 'New York', '51000', 'New York', '44919', 'Manhattan', '10001', 40.7506, -73.9972, 40.7606, -73.9872),
  ('48', 'TX', 'Texas',    '453', 'Travis',   '05000', 'Austin',   '90100', 'Austin',    '78701', 30.2707, -97.7432, 30.2807, -97.7332),
  ('17', 'IL', 'Illinois', '167', 'Sangamon', '72000', 'Springfield', '11358', 'Capital', '62701', 39.8003, -89.6494, 39.8103, -89.6394);

CREATE TEMPORARY TABLE fixture_street (
  statefp text, street_no int,
  predirabrv text, name text, suftypabrv text,
  dlat numeric, dlng numeric,   -- where the street starts, from the city's origin (degrees)
  heading text,                 -- 'E' (west to east) or 'N' (south to north)
  blocks int                    -- blocks of 0.0025 degrees, numbered 100, 200, ...
) ON COMMIT DROP;

INSERT INTO fixture_street
SELECT c.statefp, s.street_no, s.predirabrv, s.name, s.suftypabrv, s.dlat, s.dlng, s.heading, s.blocks
  FROM fixture_city c
  CROSS JOIN LATERAL (VALUES
    (1, NULL, 'Main', 'St',  0.0,   0.0,   'E', 3),
    (2, NULL, 'Oak',  'Ave', 0.0,   0.005, 'N', 3),
    (3, CASE c.stusps WHEN 'NY' THEN 'W' ELSE 'E' END,
        CASE c.stusps WHEN 'NY' THEN '26th' WHEN 'TX' THEN '6th' ELSE 'Adams' END,
                      'St',  0.005, 0.0,   'E', 2)
  ) AS s(street_no, predirabrv, name, suftypabrv, dlat, dlng, heading, blocks);

-- One edge per block. tlid: state fips, street, block (e.g. 17010002 = IL, street 1, block 200).
-- One face per city (tfid = state fips * 1000) on both sides of every edge.
CREATE TEMPORARY TABLE fixture_edge ON COMMIT DROP AS
SELECT s.statefp, c.countyfp, c.zip,
       (s.statefp::int * 1000000 + s.street_no * 10000 + b)::bigint AS tlid,
       s.statefp::int * 1000 AS tfid,
       concat_ws(' ', s.predirabrv, s.name, s.suftypabrv) AS fullname,
       s.predirabrv, s.name, s.suftypabrv,
       b * 100 AS from_even, b * 100 + 98 AS to_even,  -- right side
       b * 100 + 1 AS from_odd, b * 100 + 99 AS to_odd, -- left side
       ST_Multi(ST_SetSRID(ST_MakeLine(
         ST_MakePoint(c.lng + s.dlng + CASE s.heading WHEN 'E' THEN (b - 1) * 0.0025 ELSE 0 END,
                      c.lat + s.dlat + CASE s.heading WHEN 'N' THEN (b - 1) * 0.0025 ELSE 0 END),
         ST_MakePoint(c.lng + s.dlng + CASE s.heading WHEN 'E' THEN b * 0.0025 ELSE 0 END,
                      c.lat + s.dlat + CASE s.heading WHEN 'N' THEN b * 0.0025 ELSE 0 END)
       ), 4269)) AS line
  FROM fixture_street s
  JOIN fixture_city c USING (statefp)
  CROSS JOIN LATERAL generate_series(1, s.blocks) AS b;

-- Every area of a city (state, county, place, county subdivision, face, ZCTA) is the same square,
-- 0.03 degrees either side of the ZIP centroid: it holds all the streets.
CREATE TEMPORARY TABLE fixture_area ON COMMIT DROP AS
SELECT statefp,
       ST_Multi(ST_MakeEnvelope(zip_lng - 0.03, zip_lat - 0.03, zip_lng + 0.03, zip_lat + 0.03, 4269)) AS square
  FROM fixture_city;

-- Nation-wide tables, as Loader_Generate_Nation_Script makes them.
CREATE TABLE tiger_data.state_all (
  CONSTRAINT pk_state_all PRIMARY KEY (statefp),
  CONSTRAINT uidx_state_all_stusps UNIQUE (stusps),
  CONSTRAINT uidx_state_all_gid UNIQUE (gid)
) INHERITS (tiger.state);
INSERT INTO tiger_data.state_all (statefp, stusps, name, lsad, mtfcc, funcstat, intptlat, intptlon, the_geom)
SELECT c.statefp, c.stusps, c.state_name, '00', 'G4000', 'A', c.zip_lat::text, c.zip_lng::text, a.square
  FROM fixture_city c JOIN fixture_area a USING (statefp);

CREATE TABLE tiger_data.county_all (
  CONSTRAINT pk_tiger_data_county_all PRIMARY KEY (cntyidfp),
  CONSTRAINT uidx_tiger_data_county_all_gid UNIQUE (gid)
) INHERITS (tiger.county);
INSERT INTO tiger_data.county_all (statefp, countyfp, cntyidfp, name, namelsad, lsad, classfp, mtfcc, funcstat, the_geom)
SELECT c.statefp, c.countyfp, c.statefp || c.countyfp, c.county_name, c.county_name || ' County', '06', 'H1', 'G4020', 'A', a.square
  FROM fixture_city c JOIN fixture_area a USING (statefp);

CREATE TABLE tiger_data.county_all_lookup (
  CONSTRAINT pk_county_all_lookup PRIMARY KEY (st_code, co_code)
) INHERITS (tiger.county_lookup);
INSERT INTO tiger_data.county_all_lookup (st_code, state, co_code, name)
SELECT s.statefp::int, s.abbrev, c.countyfp::int, c.name
  FROM tiger_data.county_all c JOIN tiger.state_lookup s ON s.statefp = c.statefp;

-- ZIP code areas (the loader's optional zcta5 step): geocode() answers an address on an unknown
-- street with the centroid of its ZIP's area, rating 100.
CREATE TABLE tiger_data.zcta5_all (
  CONSTRAINT pk_zcta5_all PRIMARY KEY (zcta5ce, statefp),
  CONSTRAINT uidx_zcta5_raw_all_gid UNIQUE (gid)
) INHERITS (tiger.zcta5);
INSERT INTO tiger_data.zcta5_all (statefp, zcta5ce, classfp, mtfcc, funcstat, intptlat, intptlon, partflg, the_geom)
SELECT c.statefp, c.zip, 'B5', 'G6350', 'S', c.zip_lat::text, c.zip_lng::text, 'N', a.square
  FROM fixture_city c JOIN fixture_area a USING (statefp);

-- Per-state tables, as Loader_Generate_Script makes them: tiger_data.<st>_<table> INHERITS tiger.<table>.
DO $load$
DECLARE
  c record;
  st text;
BEGIN
  FOR c IN SELECT * FROM fixture_city ORDER BY statefp LOOP
    st := lower(c.stusps);

    EXECUTE format('CREATE TABLE tiger_data.%1$I (CONSTRAINT %2$I PRIMARY KEY (plcidfp)) INHERITS (tiger.place)',
                   st || '_place', 'pk_' || st || '_place');
    EXECUTE format($sql$
      INSERT INTO tiger_data.%I (statefp, placefp, plcidfp, name, namelsad, lsad, classfp, mtfcc, funcstat, the_geom)
      SELECT c.statefp, c.placefp, c.statefp || c.placefp, c.place_name, c.place_name || ' city', '25', 'C1', 'G4110', 'A', a.square
        FROM fixture_city c JOIN fixture_area a USING (statefp) WHERE c.statefp = %L
    $sql$, st || '_place', c.statefp);

    EXECUTE format('CREATE TABLE tiger_data.%1$I (CONSTRAINT %2$I PRIMARY KEY (cosbidfp)) INHERITS (tiger.cousub)',
                   st || '_cousub', 'pk_' || st || '_cousub');
    EXECUTE format($sql$
      INSERT INTO tiger_data.%I (statefp, countyfp, cousubfp, cosbidfp, name, namelsad, lsad, classfp, mtfcc, funcstat, the_geom)
      SELECT c.statefp, c.countyfp, c.cousubfp, c.statefp || c.countyfp || c.cousubfp, c.cousub_name, c.cousub_name, '00', 'Z1', 'G4040', 'S', a.square
        FROM fixture_city c JOIN fixture_area a USING (statefp) WHERE c.statefp = %L
    $sql$, st || '_cousub', c.statefp);

    EXECUTE format('CREATE TABLE tiger_data.%1$I (CONSTRAINT %2$I PRIMARY KEY (gid)) INHERITS (tiger.faces)',
                   st || '_faces', 'pk_' || st || '_faces');
    EXECUTE format($sql$
      INSERT INTO tiger_data.%I (tfid, statefp, countyfp, cousubfp, placefp, zcta5ce, lwflag, the_geom)
      SELECT c.statefp::int * 1000, c.statefp, c.countyfp, c.cousubfp, c.placefp, c.zip, 'L', a.square
        FROM fixture_city c JOIN fixture_area a USING (statefp) WHERE c.statefp = %L
    $sql$, st || '_faces', c.statefp);

    EXECUTE format('CREATE TABLE tiger_data.%1$I (CONSTRAINT %2$I PRIMARY KEY (gid)) INHERITS (tiger.edges)',
                   st || '_edges', 'pk_' || st || '_edges');
    EXECUTE format($sql$
      INSERT INTO tiger_data.%I (statefp, countyfp, tlid, tfidl, tfidr, mtfcc, fullname,
                                 lfromadd, ltoadd, rfromadd, rtoadd, zipl, zipr,
                                 featcat, roadflg, tnidf, tnidt, the_geom)
      SELECT statefp, countyfp, tlid, tfid, tfid, 'S1400', fullname,
             from_odd, to_odd, from_even, to_even, zip, zip,
             'S', 'Y', tlid * 10, tlid * 10 + 1, line
        FROM fixture_edge WHERE statefp = %L
    $sql$, st || '_edges', c.statefp);

    EXECUTE format('CREATE TABLE tiger_data.%1$I (CONSTRAINT %2$I PRIMARY KEY (gid)) INHERITS (tiger.featnames)',
                   st || '_featnames', 'pk_' || st || '_featnames');
    EXECUTE format($sql$
      INSERT INTO tiger_data.%I (tlid, fullname, name, predirabrv, suftypabrv, linearid, mtfcc, paflag, statefp)
      SELECT tlid, fullname, name, predirabrv, suftypabrv, (tlid / 10000)::text, 'S1400', 'P', statefp
        FROM fixture_edge WHERE statefp = %L
    $sql$, st || '_featnames', c.statefp);

    EXECUTE format('CREATE TABLE tiger_data.%1$I (CONSTRAINT %2$I PRIMARY KEY (gid)) INHERITS (tiger.addr)',
                   st || '_addr', 'pk_' || st || '_addr');
    EXECUTE format($sql$
      INSERT INTO tiger_data.%I (tlid, fromhn, tohn, side, zip, fromtyp, totyp, arid, mtfcc, statefp)
      SELECT tlid, a.fromhn, a.tohn, a.side, zip, 'I', 'I', tlid || a.side, 'S1400', statefp
        FROM fixture_edge
        CROSS JOIN LATERAL (VALUES (from_even::text, to_even::text, 'R'), (from_odd::text, to_odd::text, 'L')) AS a(fromhn, tohn, side)
       WHERE statefp = %L
    $sql$, st || '_addr', c.statefp);

    -- The ZIP tables the loader fills from the edges, faces, places and addresses it just loaded.
    EXECUTE format('CREATE TABLE tiger_data.%1$I (CONSTRAINT %2$I PRIMARY KEY (zip, stusps)) INHERITS (tiger.zip_state)',
                   st || '_zip_state', 'pk_' || st || '_zip_state');
    EXECUTE format('INSERT INTO tiger_data.%I (zip, stusps, statefp) SELECT DISTINCT zip, %L, %L FROM tiger_data.%I WHERE zip IS NOT NULL',
                   st || '_zip_state', c.stusps, c.statefp, st || '_addr');

    EXECUTE format('CREATE TABLE tiger_data.%1$I (CONSTRAINT %2$I PRIMARY KEY (zip, stusps, place)) INHERITS (tiger.zip_state_loc)',
                   st || '_zip_state_loc', 'pk_' || st || '_zip_state_loc');
    EXECUTE format($sql$
      INSERT INTO tiger_data.%1$I (zip, stusps, statefp, place)
      SELECT DISTINCT e.zipl, %4$L, %5$L, p.name
        FROM tiger_data.%2$I e
        JOIN tiger_data.%3$I f ON (e.tfidl = f.tfid OR e.tfidr = f.tfid)
        JOIN tiger_data.%6$I p ON (f.statefp = p.statefp AND f.placefp = p.placefp)
       WHERE e.zipl IS NOT NULL
    $sql$, st || '_zip_state_loc', st || '_edges', st || '_faces', c.stusps, c.statefp, st || '_place');

    EXECUTE format('CREATE TABLE tiger_data.%1$I (CONSTRAINT %2$I PRIMARY KEY (zip, state, county, city, statefp)) INHERITS (tiger.zip_lookup_base)',
                   st || '_zip_lookup_base', 'pk_' || st || '_zip_state_loc_city');
    EXECUTE format($sql$
      INSERT INTO tiger_data.%1$I (zip, state, county, city, statefp)
      SELECT DISTINCT e.zipl, %4$L, co.name, p.name, %5$L
        FROM tiger_data.%2$I e
        JOIN tiger.county co ON (e.countyfp = co.countyfp AND e.statefp = co.statefp)
        JOIN tiger_data.%3$I f ON (e.tfidl = f.tfid OR e.tfidr = f.tfid)
        JOIN tiger_data.%6$I p ON (f.statefp = p.statefp AND f.placefp = p.placefp)
       WHERE e.zipl IS NOT NULL
    $sql$, st || '_zip_lookup_base', st || '_edges', st || '_faces', c.stusps, c.statefp, st || '_place');
  END LOOP;
END
$load$;

COMMIT;

ANALYZE;
