import { parse } from 'csv-parse/browser/esm/sync';
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { emailProblem, parsePhone, websiteProblem } from '../../shared/contact-fields.js';
import { unguardCell } from '../../shared/csv-guard.js';
import { KM_PER_MILE } from '../../shared/great-circle.js';
import { US_STATE_CODES } from '../../shared/us-states.js';
import { STORE_FIELDS, type StoreFieldName, type StoreFieldSpec } from '../../shared/store-fields.js';
import { api, ApiError, apiFile } from './api.js';
import { openingText } from './opening-text.js';
import { fieldErrors, Hours, Pager, useListPage } from './parts.js';
import type {
  CustomerPosition,
  DistanceUnit,
  FallbackReason,
  Holiday,
  Location,
  PositionSource,
  SearchScope,
  Store,
  StoreWritten,
  TravelSource,
} from './schema.js';
import { StoreMap, type StorePoints } from './store-map.js';

const PAGE = 25;
const HOVER_REST_MS = 100;
const OPENING_TICK_MS = 60_000;
/**
 * The edit form's fields: the admin request's text fields, from the one field table. The special
 * days, the closure and the services are JSON (the first two shown on the card); a PUT without
 * them keeps them as they are.
 */
const FORM_FIELDS = (STORE_FIELDS as readonly StoreFieldSpec[])
  .filter((field) => field.request && field.kind !== 'special_days' && field.kind !== 'closure' && field.kind !== 'services')
  .map((field) => field.name as Exclude<StoreFieldName, 'code' | 'special_hours' | 'temporarily_closed' | 'services'>);
type StoreForm = Record<(typeof FORM_FIELDS)[number], string>;
/**
 * Under a field of the edit form. The zone is sent as shown, so a store moved to another zone
 * keeps its old one until the field is emptied (the API then takes the zone at the coordinates).
 */
const FIELD_HINTS: Partial<Record<keyof StoreForm, string>> = {
  time_zone: 'IANA name, e.g. America/Denver. Empty: from the coordinates.',
  phone: 'US number, any usual way, e.g. (913) 555-0142. Empty: none.',
  website: 'https address. Empty: none.',
  email: 'Empty: none.',
};

/** Every store's code and point, from the export's three columns (3 MB for 100,000 stores). */
async function loadPoints(): Promise<StorePoints> {
  const text = await (await apiFile('/admin/stores.csv?columns=code,lat,lng')).text();
  // Marks for `npm run bench:console`'s breakdown (download, parse, project and draw).
  performance.mark('console:points-fetched');
  const records: string[][] = parse(text, { from_line: 2 });
  const lat = new Float64Array(records.length);
  const lng = new Float64Array(records.length);
  const codes = records.map((record, n) => {
    lat[n] = Number(record[1]);
    lng[n] = Number(record[2]);
    return unguardCell(record[0]);
  });
  performance.mark('console:points-parsed');
  return { codes, lat, lng };
}

const storePath = (code: string) => `/admin/stores/${encodeURIComponent(code)}`;

/**
 * Open or closed now, and until when, in the store's own time zone. Drawn again every minute: the
 * answer moves with the clock, not with the store's data (and one timer set for the next change,
 * hours ahead, would fire late after the computer has slept).
 */
function OpeningNow({ store, holidays }: { store: Store; holidays: readonly Holiday[] }) {
  const [, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((n) => n + 1), OPENING_TICK_MS);
    return () => clearInterval(timer);
  }, []);
  const opening = openingText(store, store.time_zone, Date.now(), holidays);
  return html`<p class="opening">
    ${opening && html`<strong class=${opening.open ? 'open' : 'closed'}>${opening.headline}</strong>${opening.until && ` · ${opening.until}`}<br />`}
    <span class="zone">Time zone: ${store.time_zone}</span>
  </p>`;
}

/** A store's days that differ from its week: its temporary closure and its special days, by date. */
function SpecialDays({ store }: { store: Store }) {
  const closure = store.temporarily_closed;
  if (!closure && store.special_hours.length === 0) return null;
  return html`<div class="special-days">
    ${closure && html`<p class="closure"><strong>Temporarily closed</strong> from ${closure.from} ${closure.until ? `until ${closure.until}` : 'until further notice'}</p>`}
    ${
      store.special_hours.length > 0 &&
      html`<dl class="hours special" aria-label="Special days">
        ${store.special_hours.map(
          ({ date, hours }) =>
            html`<dt>${date}</dt>
              <dd>${hours}</dd>`,
        )}
      </dl>`
    }
  </div>`;
}

/** `(913) 555-0142` for a stored `+19135550142`. */
const phoneText = (phone: string) => `(${phone.slice(2, 5)}) ${phone.slice(5, 8)}-${phone.slice(8)}`;

/**
 * A store's phone, website and email, each a link only when it passes the API's own check again
 * (shared/contact-fields.ts), so that a value edited by hand into the table never becomes a
 * `javascript:` link: it shows as text. The address's local part is percent-encoded in the
 * `mailto:` (RFC 6068), where a `?` it may hold would start headers (`?cc=…`). The website opens
 * in a new tab without handing it this page (`noopener noreferrer`).
 */
function Contact({ store }: { store: Store }) {
  const { phone, website, email } = store;
  if (!phone && !website && !email) return null;
  const parsed = phone ? parsePhone(phone) : undefined;
  const dialable = parsed && 'phone' in parsed ? parsed.phone : undefined;
  const at = email ? email.lastIndexOf('@') : -1;
  return html`<dl class="contact" aria-label="Contact">
    ${
      phone &&
      html`<dt>Phone</dt>
        <dd>${dialable ? html`<a href=${`tel:${dialable}`}>${phoneText(dialable)}</a>` : phone}</dd>`
    }
    ${
      website &&
      html`<dt>Website</dt>
        <dd>${websiteProblem(website) === null ? html`<a href=${website} target="_blank" rel="noopener noreferrer">${website}</a>` : website}</dd>`
    }
    ${
      email &&
      html`<dt>Email</dt>
        <dd>
          ${emailProblem(email) === null ? html`<a href=${`mailto:${encodeURIComponent(email.slice(0, at))}@${email.slice(at + 1)}`}>${email}</a>` : email}
        </dd>`
    }
  </dl>`;
}

function StoreCard({ store, holidays, onEdit, onDelete }: { store: Store; holidays: readonly Holiday[]; onEdit?: () => void; onDelete?: () => void }) {
  return html`<div class="store-card">
    <h3>${store.name} <small>${store.code}</small></h3>
    <p>${store.address}, ${store.city}, ${store.state} ${store.zip}</p>
    <${Contact} store=${store} />
    <${OpeningNow} store=${store} holidays=${holidays} />
    <${Hours} hours=${store} />
    <${SpecialDays} store=${store} />
    ${onEdit && html`<div class="actions"><button type="button" onClick=${onEdit}>Edit ${store.code}</button> <button type="button" class="danger" onClick=${onDelete}>Delete ${store.code}</button></div>`}
  </div>`;
}

function EditStore({ store, onDone }: { store: Store; onDone: (changed: boolean) => void }) {
  const [form, setForm] = useState<StoreForm>(() => Object.fromEntries(FORM_FIELDS.map((field) => [field, store[field] ?? ''])) as StoreForm);
  const [errors, setErrors] = useState<Record<string, string>>({});
  // After a save the API took with warnings (coordinates far from the ZIP code): the form stays
  // open with each warning at its field, so that the operator sees it and may correct the store.
  const [warnings, setWarnings] = useState<Record<string, string>>();
  const [busy, setBusy] = useState(false);
  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const { data } = await api<StoreWritten>('PUT', storePath(store.code), form);
      setErrors({});
      if (data.warning_details.length === 0) return onDone(true);
      const byField: Record<string, string> = {};
      for (const { field, message } of data.warning_details)
        byField[field] = byField[field] ? `${byField[field]}; ${field}: ${message}` : `${field}: ${message}`;
      setWarnings(byField);
    } catch (error) {
      // The API's own texts, each next to its field (those naming no field above the form).
      setErrors(error instanceof ApiError ? fieldErrors(error, FORM_FIELDS) : { '': String(error) });
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="edit-store" onSubmit=${save} aria-label=${`Edit store ${store.code}`}>
    <h3>Edit ${store.code}</h3>
    ${errors[''] && html`<p class="error" role="alert">${errors['']}</p>`}
    ${warnings && html`<p class="warning" role="status">Saved, with warnings: see the fields marked below.</p>`}
    <div class="fields">
      ${FORM_FIELDS.map((field) => {
        const hint = FIELD_HINTS[field];
        const warning = warnings?.[field];
        const described = [hint && `store-${field}-hint`, errors[field] && `store-${field}-error`, warning && `store-${field}-warning`]
          .filter(Boolean)
          .join(' ');
        return html`<div class="field">
          <label for=${`store-${field}`}>${field}</label>
          <input
            id=${`store-${field}`}
            value=${form[field]}
            aria-invalid=${errors[field] ? 'true' : undefined}
            aria-describedby=${described || undefined}
            onInput=${(e: Event) => setForm({ ...form, [field]: (e.target as HTMLInputElement).value })}
          />
          ${hint && html`<span class="hint" id=${`store-${field}-hint`}>${hint}</span>`}
          ${errors[field] && html`<span class="error" id=${`store-${field}-error`}>${errors[field]}</span>`}
          ${warning && html`<span class="warning" id=${`store-${field}-warning`}>${warning}</span>`}
        </div>`;
      })}
    </div>
    <button type="submit" disabled=${busy}>Save</button>
    <button type="button" onClick=${() => onDone(warnings !== undefined)}>${warnings ? 'Close' : 'Cancel'}</button>
  </form>`;
}

/**
 * What a search measured from, in words: the `source` and `fallback` of POST /admin/locations/position.
 * Keyed by the document's enums (schema.ts): a source or reason the API adds fails the type check here until it is worded.
 */
const POSITION_WORDS: Record<PositionSource, string> = {
  address: 'the street address, as the geocoder placed it',
  zip: "the ZIP code's point",
  device: "the device's position",
};
const FALLBACK_WORDS: Record<FallbackReason, string> = {
  no_match: 'the geocoder found no street-level match',
  implausible: 'the geocoder placed it too far from the ZIP code or in another state',
  timeout: 'the geocoder did not answer in time',
  error: 'the geocoder failed',
  rate_limited: 'the geocoder refused (too many requests)',
  malformed: 'the geocoder answered something unreadable',
  breaker_open: 'the geocoder is skipped after repeated failures',
};

/** Where a drive-time search's times came from, by its `Travel-Source` (keyed by the document's enum, as the words above). */
const TRAVEL_WORDS: Record<TravelSource, string> = {
  pgrouting: 'By drive time, from the road network in PostgreSQL (pgRouting).',
  osrm: 'By drive time, from the OSRM server.',
  valhalla: 'By drive time, from the Valhalla server.',
  'straight-line': 'In a straight line: no drive times (the service has no routing engine, or it did not answer in time).',
};

/** The line above a search's results, by its `Search-Scope` (keyed by the document's enum, as the words above). */
const RESULTS_TEXT: Record<SearchScope, (count: number, stores: string, region: string) => string> = {
  region: (count, stores, region) => (count === 0 ? `No store in ${region}.` : `${stores} in ${region}, nearest first:`),
  nearest: () => 'No store within reach; the nearest one:',
  radius: (count, stores) => (count === 0 ? 'No store within reach.' : `${stores}, nearest first:`),
};

function resultsText(count: number, scope: SearchScope, region?: string): string {
  return RESULTS_TEXT[scope](count, `${count} ${count === 1 ? 'store' : 'stores'}`, region ?? 'the region');
}

/** A location's drive, in words ("7.9 min, 4.88 mi by road", or "no drive time"), when the search asked for it. */
function travelSpan(location: Location, answered: { unit: DistanceUnit; travel?: TravelSource }) {
  if (!answered.travel) return null;
  const words = location.travel_time == null ? 'no drive time' : `${location.travel_time} min, ${location.travel_distance} ${answered.unit} by road`;
  return html` <span class="travel">${words}</span>`;
}

/** A location's name and address, one line. */
const placeText = (location: Location) => `${location.name}, ${location.address}, ${location.city}, ${location.state} ${location.zip}`;

function CustomerSearch({ map, onResults }: { map?: StoreMap; onResults: (locations: Location[] | undefined) => void }) {
  const [address, setAddress] = useState('');
  const [city, setCity] = useState('');
  const [state, setState] = useState('');
  const [zip, setZip] = useState('');
  const [miles, setMiles] = useState('5');
  const [unit, setUnit] = useState<DistanceUnit>('mi');
  const [nearestIfNone, setNearestIfNone] = useState(false);
  const [regionState, setRegionState] = useState('');
  const [regionCity, setRegionCity] = useState('');
  const [byDrive, setByDrive] = useState(false);
  const [minutes, setMinutes] = useState('');
  const [error, setError] = useState<string>();
  const [locations, setLocations] = useState<Location[]>();
  const [answered, setAnswered] = useState<{ unit: DistanceUnit; scope: SearchScope; region?: string; travel?: TravelSource }>();
  const [position, setPosition] = useState<CustomerPosition>();
  const search = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      // The search's own answer, from its admin door, and where it measured from (the geocoder's
      // cache answers the second ask). A number when it reads as one; otherwise as typed, so that
      // the API's own 400 says what is wrong.
      const distance = /^\s*\d+(\.\d+)?\s*$/.test(miles) ? Number(miles) : miles;
      const customer = Object.fromEntries(Object.entries({ address, city, state, zip }).filter(([, value]) => value.trim() !== ''));
      // A region (its state filled in) takes every store of it, at any distance: no radius, no fallback.
      const region = regionState.trim() !== '' ? { state: regionState, ...(regionCity.trim() !== '' ? { city: regionCity } : {}) } : undefined;
      const request = {
        customer_address: customer,
        ...(region ? { region } : { max_distance: distance, ...(nearestIfNone ? { nearest_if_none: true } : {}) }),
        limit: 200,
        ...(unit === 'km' ? { distance_unit: unit } : {}),
        ...(byDrive
          ? { travel_mode: 'driving', ...(minutes.trim() !== '' ? { max_travel_time: /^\s*\d+(\.\d+)?\s*$/.test(minutes) ? Number(minutes) : minutes } : {}) }
          : {}),
      };
      const [{ data, headers }, { data: found }] = await Promise.all([
        api<{ locations: Location[] }>('POST', '/admin/locations/nearest', request),
        api<CustomerPosition>('POST', '/admin/locations/position', request),
      ]);
      // The headers the document describes with these enums (schema.ts).
      const scope = (headers.get('Search-Scope') ?? 'radius') as SearchScope;
      setLocations(data.locations);
      setAnswered({
        unit: (headers.get('Distance-Unit') ?? 'mi') as DistanceUnit,
        scope,
        region: region && [region.city?.trim(), region.state.toUpperCase()].filter(Boolean).join(', '),
        travel: (headers.get('Travel-Source') ?? undefined) as TravelSource | undefined,
      });
      setPosition(found);
      onResults(data.locations);
      // The circle is the radius asked, in miles on the map; a region search has none.
      map?.setCircle(region ? undefined : { lat: found.lat, lng: found.lng, miles: unit === 'km' ? Number(miles) / KM_PER_MILE : Number(miles) });
      map?.setPositions({ customer: found, zip: found.zip });
    } catch (failure) {
      setLocations(undefined);
      setAnswered(undefined);
      setPosition(undefined);
      onResults(undefined);
      map?.setCircle(undefined);
      map?.setPositions(undefined);
      setError(failure instanceof Error ? failure.message : String(failure));
    }
  };
  const field = (id: string, label: string, value: string, set: (value: string) => void, size: number, mode = 'text') =>
    html`<label for=${id}>${label}</label>
      <input id=${id} inputmode=${mode} size=${size} value=${value} onInput=${(e: Event) => set((e.target as HTMLInputElement).value)} />`;
  return html`<section aria-labelledby="search-heading" class="search">
    <h2 id="search-heading">Where would a customer land?</h2>
    <form onSubmit=${search} class="inline">
      ${field('search-address', 'Street address', address, setAddress, 22)} ${field('search-city', 'City', city, setCity, 12)}
      ${field('search-state', 'State (two letters)', state, setState, 3)} ${field('search-zip', 'ZIP code', zip, setZip, 10, 'numeric')}
      ${field('search-miles', unit === 'km' ? 'Distance (km)' : 'Distance (miles)', miles, setMiles, 5, 'decimal')}
      <label for="search-unit">Unit</label>
      <select id="search-unit" value=${unit} onChange=${(e: Event) => setUnit((e.target as HTMLSelectElement).value as DistanceUnit)}>
        <option value="mi">miles</option>
        <option value="km">kilometres</option>
      </select>
      <label
        ><input type="checkbox" checked=${nearestIfNone} onChange=${(e: Event) => setNearestIfNone((e.target as HTMLInputElement).checked)} /> Nearest store if
        none in range</label
      >
      ${field('search-region-state', 'Or every store of a state (two letters)', regionState, setRegionState, 3)}
      ${field('search-region-city', 'and of its city', regionCity, setRegionCity, 12)}
      <label><input type="checkbox" checked=${byDrive} onChange=${(e: Event) => setByDrive((e.target as HTMLInputElement).checked)} /> By drive time</label>
      ${byDrive && field('search-minutes', 'within (minutes)', minutes, setMinutes, 4, 'decimal')}
      <button type="submit">Search</button>
    </form>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${
      position &&
      html`<p class="hint" data-position=${position.source}>
        <span aria-hidden="true" class="legend-diamond"></span>
        ${`Measured from ${POSITION_WORDS[position.source]} (${position.lat.toFixed(6)}, ${position.lng.toFixed(6)})${position.fallback ? `: ${FALLBACK_WORDS[position.fallback]}` : ''}. `}
        <span aria-hidden="true" class="legend-square"></span>
        ${`ZIP ${position.zip.zip}'s point: ${position.zip.lat.toFixed(6)}, ${position.zip.lng.toFixed(6)}.`}
      </p>`
    }
    ${
      locations &&
      answered &&
      html`<p role="status" data-scope=${answered.scope}>${resultsText(locations.length, answered.scope, answered.region)}</p>
        ${answered.travel && html`<p class="hint" data-travel=${answered.travel}>${TRAVEL_WORDS[answered.travel]}</p>`}
        <ol class="results">
          ${locations.map((location) => html`<li><span class="distance">${location.distance} ${answered.unit}</span>${travelSpan(location, answered)} ${placeText(location)}</li>`)}
        </ol>`
    }
  </section>`;
}

export function StoresView({ catalogVersion, onChanged }: { catalogVersion?: number | null; onChanged: () => void }) {
  const baseRef = useRef<HTMLCanvasElement>(null);
  const overlayRef = useRef<HTMLCanvasElement>(null);
  const [map, setMap] = useState<StoreMap>();
  const [mapError, setMapError] = useState<string>();
  const [points, setPoints] = useState<StorePoints>();
  const [storeCount, setStoreCount] = useState<number>();
  const [hover, setHover] = useState<{ store?: Store; cluster?: number; x: number; y: number }>();
  const [selected, setSelected] = useState<Store>();
  const [editing, setEditing] = useState<Store>();
  const [filter, setFilter] = useState({ state: '', q: '' });
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const [reloads, setReloads] = useState(0);
  const [holidays, setHolidays] = useState<readonly Holiday[]>([]);
  const details = useRef(new Map<string, Promise<Store>>());
  const hoverTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  useEffect(() => {
    const created = new StoreMap(baseRef.current!, overlayRef.current!);
    // A zoom or a pan moves the dots away from under a tooltip: the next pointer move finds it again.
    created.onViewChange = () => (created.setHovered(-1), setHover(undefined));
    setMap(created);
    return () => created.destroy();
  }, []);

  // The map follows the catalogue: loaded again whenever its version moves (an import, an edit).
  // The download starts at once, beside the drawing of the outlines, not after it.
  useEffect(() => {
    let current = true;
    details.current.clear();
    loadPoints().then(
      (loaded) => {
        if (!current) return;
        setPoints(loaded);
        setMapError(undefined);
      },
      (error: unknown) => current && setMapError(error instanceof Error ? error.message : String(error)),
    );
    return () => void (current = false);
  }, [catalogVersion, reloads]);

  // The chain's holidays, for the cards' opening words: a holiday written bumps the catalogue's
  // version too. Until they load (or if they cannot), the cards go by the stores' own hours.
  useEffect(() => {
    let current = true;
    api<Holiday[]>('GET', '/admin/holidays').then(
      ({ data }) => current && setHolidays(data),
      () => undefined,
    );
    return () => void (current = false);
  }, [catalogVersion, reloads]);

  useEffect(() => {
    if (!map || !points) return;
    map.setStores(points);
    setStoreCount(points.codes.length);
  }, [map, points]);

  const {
    page,
    error: tableError,
    setError: setTableError,
  } = useListPage<Store>('/admin/stores', { limit: String(PAGE), after: cursors[cursors.length - 1], state: filter.state, q: filter.q.trim() }, [
    catalogVersion,
    reloads,
  ]);

  const storeDetails = (code: string): Promise<Store> => {
    let found = details.current.get(code);
    if (!found) {
      found = api<Store>('GET', storePath(code)).then(({ data }) => data);
      found.catch(() => details.current.delete(code));
      details.current.set(code, found);
    }
    return found;
  };

  const pointer = (event: MouseEvent) => {
    // The zoom buttons sit on the map too: only the canvas's own points count. While a button
    // is held the map is being dragged: no tooltip (and no re-render of this view per move).
    if (!map || event.target !== baseRef.current || (event.type === 'mousemove' && event.buttons !== 0)) return;
    const box = (event.target as HTMLCanvasElement).getBoundingClientRect();
    const x = event.clientX - box.left;
    const y = event.clientY - box.top;
    const store = map.storeAt(x, y);
    map.setHovered(store);
    if (store < 0) {
      // A cluster says how many stores it holds; its click (zooming in) is the map's own.
      const cluster = event.type === 'click' ? undefined : map.clusterAt(x, y);
      clearTimeout(hoverTimer.current);
      return setHover(cluster && { cluster: cluster.count, x, y });
    }
    const code = map.code(store);
    setHover((now) => (now && map.storeAt(now.x, now.y) === store ? { ...now, x, y } : { x, y }));
    // A store's details are asked for once the pointer rests on its dot (not for every dot it
    // crosses), then kept for the session of this map.
    clearTimeout(hoverTimer.current);
    hoverTimer.current = setTimeout(
      () => void storeDetails(code).then((found) => setHover((now) => (now && map.storeAt(now.x, now.y) === store ? { ...now, store: found } : now))),
      HOVER_REST_MS,
    );
    if (event.type === 'click') void storeDetails(code).then(setSelected);
  };

  const changed = () => {
    setReloads((n) => n + 1);
    onChanged();
  };

  const remove = async (store: Store) => {
    if (!window.confirm(`Delete store ${store.code} (${store.name})? Customers stop finding it at once.`)) return;
    try {
      await api('DELETE', storePath(store.code));
      setSelected(undefined);
      changed();
    } catch (error) {
      setTableError(error instanceof Error ? error.message : String(error));
    }
  };

  const setFilterField = (field: 'state' | 'q', value: string) => {
    setFilter({ ...filter, [field]: value });
    setCursors([undefined]);
  };

  return html`<div class="stores">
    <section aria-labelledby="map-heading" class="map-panel">
      <h2 id="map-heading">Stores on the map</h2>
      <p role="status">
        ${mapError ? html`<span class="error">${mapError}</span>` : storeCount === undefined ? 'Loading the stores…' : `${storeCount} stores. Point at a dot for its details, click to keep them.`}
      </p>
      <p class="hint" id="map-help">
        Zoom with the wheel, a pinch or the buttons; drag to move. A numbered circle is that many stores close together: click it to zoom in. With the map
        focused: + and − zoom, the arrow keys move, 0 shows the whole country.
      </p>
      <div class="map" onMouseMove=${pointer} onClick=${pointer} onMouseLeave=${() => (map?.setHovered(-1), setHover(undefined))}>
        <canvas
          ref=${baseRef}
          id="store-map"
          tabindex="0"
          role="application"
          aria-roledescription="map"
          aria-label=${`Map of ${storeCount ?? 0} stores`}
          aria-describedby="map-help"
        ></canvas>
        <canvas ref=${overlayRef} class="overlay" aria-hidden="true"></canvas>
        <div class="zoom" role="group" aria-label="Map zoom">
          <button type="button" aria-label="Zoom in" onClick=${() => map?.zoomBy(2)}>+</button>
          <button type="button" aria-label="Zoom out" onClick=${() => map?.zoomBy(0.5)}>−</button>
          <button type="button" aria-label="Reset the map to the whole country" onClick=${() => map?.reset()}>Reset</button>
        </div>
        ${hover?.store && html`<div class="tooltip" style=${`left:${hover.x + 12}px;top:${hover.y + 12}px`}><${StoreCard} store=${hover.store} holidays=${holidays} /></div>`}
        ${hover?.cluster && html`<div class="tooltip" style=${`left:${hover.x + 12}px;top:${hover.y + 12}px`}>${hover.cluster} stores here: click to zoom in</div>`}
      </div>
      ${selected && !editing && html`<${StoreCard} store=${selected} holidays=${holidays} onEdit=${() => setEditing(selected)} onDelete=${() => void remove(selected)} />`}
      <${CustomerSearch} map=${map} onResults=${(locations?: Location[]) => map?.setHighlighted(locations ?? [])} />
    </section>
    <section aria-labelledby="table-heading" class="table-panel">
      <h2 id="table-heading">Store list</h2>
      <form class="inline" onSubmit=${(e: Event) => e.preventDefault()}>
        <label for="filter-state">State</label>
        <select id="filter-state" value=${filter.state} onChange=${(e: Event) => setFilterField('state', (e.target as HTMLSelectElement).value)}>
          <option value="">All</option>
          ${[...US_STATE_CODES].sort().map((code) => html`<option value=${code}>${code}</option>`)}
        </select>
        <label for="filter-q">Text</label>
        <input id="filter-q" type="search" value=${filter.q} onInput=${(e: Event) => setFilterField('q', (e.target as HTMLInputElement).value)} />
      </form>
      ${tableError && html`<p class="error" role="alert">${tableError}</p>`}
      ${editing && html`<${EditStore} store=${editing} onDone=${(saved: boolean) => (setEditing(undefined), setSelected(undefined), saved && changed())} />`}
      <table>
        <caption class="visually-hidden">
          Stores by code
        </caption>
        <thead>
          <tr>
            <th scope="col">Code</th>
            <th scope="col">Name</th>
            <th scope="col">City</th>
            <th scope="col">State</th>
            <th scope="col">ZIP</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          ${page?.items.map(
            (store) =>
              html`<tr>
                <td>${store.code}</td>
                <td>${store.name}</td>
                <td>${store.city}</td>
                <td>${store.state}</td>
                <td>${store.zip}</td>
                <td>
                  <button type="button" onClick=${() => setEditing(store)} aria-label=${`Edit ${store.code}`}>Edit</button>
                  <button type="button" class="danger" onClick=${() => void remove(store)} aria-label=${`Delete ${store.code}`}>Delete</button>
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
      <${Pager} cursors=${cursors} next=${page?.next} onChange=${setCursors} />
    </section>
  </div>`;
}
