import { html, render } from 'htm/preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiError, onSignedOut, session } from './api.js';
import { HolidaysView } from './holidays-view.js';
import { ImportView } from './import-view.js';
import type { Status } from './schema.js';
import { StoresView } from './stores-view.js';
import { TokensView } from './tokens-view.js';

// The operator's console: Preact with htm templates (no build step of its own beyond
// esbuild's bundle, no JSX), everything from this service: no CDN, no map tiles.

const VIEWS = [
  ['stores', 'Stores'],
  ['import', 'Import and export'],
  ['holidays', 'Holidays'],
  ['tokens', 'Tokens'],
] as const;
type View = (typeof VIEWS)[number][0];

const STATUS_EVERY_MS = 10_000;

function SignIn({ onSignedIn, notice }: { onSignedIn: () => void; notice?: string }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>(notice);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      // The status is an admin route: a team token gets the API's 403, a wrong one its 401.
      await api('GET', '/admin/status', undefined, token.trim());
      session.token = token.trim();
      onSignedIn();
    } catch (failure) {
      setError(failure instanceof ApiError ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };
  return html`<main class="sign-in">
    <h1>Plant Store console</h1>
    <form onSubmit=${submit}>
      <label for="token">Admin token</label>
      <input
        id="token"
        type="password"
        autocomplete="off"
        spellcheck="false"
        required
        value=${token}
        onInput=${(e: Event) => setToken((e.target as HTMLInputElement).value)}
      />
      <p class="hint">
        An admin token (scope <code>admin</code>), e.g. from <code>npm run cli -- tokens create --team ops --scope admin</code>. It is kept in this tab only,
        until you sign out or close it.
      </p>
      <button type="submit" disabled=${busy}>Sign in</button>
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </form>
  </main>`;
}

function StatusStrip({ status, error }: { status?: Status; error?: string }) {
  if (error) return html`<p class="status error" role="status">Status unavailable: ${error}</p>`;
  if (!status) return html`<p class="status" role="status">Loading the status…</p>`;
  const events = status.change_events;
  const replicas = events.stream_state ? `, ${events.stream_state.replicas} ${events.stream_state.replicas === 1 ? 'replica' : 'replicas'}` : '';
  return html`<p class="status" role="status" data-ready=${String(status.ready)}>
    <span class=${status.ready ? 'ok' : 'bad'}>${status.ready ? 'Ready' : `Not ready: ${status.problem}`}</span>
    <span>${status.stores ?? '?'} stores</span>
    <span>catalogue version ${status.catalog_version ?? '?'}</span>
    ${
      events.stream_problem
        ? html`<span class="bad">change events not published (${events.backlog ?? '?'} waiting): ${events.stream_problem}</span>`
        : html`<span>change events ${events.enabled ? `on (stream ${events.stream}${replicas}, ${events.backlog ?? '?'} waiting)` : 'off'}</span>`
    }
  </p>`;
}

function App() {
  const [signedIn, setSignedIn] = useState(session.token !== null);
  const [notice, setNotice] = useState<string>();
  const [view, setView] = useState<View>('stores');
  const [status, setStatus] = useState<Status>();
  const [statusError, setStatusError] = useState<string>();

  const signOut = useCallback((message?: string) => {
    session.token = null;
    setNotice(message);
    setStatus(undefined);
    setSignedIn(false);
  }, []);
  useEffect(() => onSignedOut((message) => signOut(`Signed out: ${message}`)), [signOut]);

  const refreshStatus = useCallback(async () => {
    try {
      setStatus((await api<Status>('GET', '/admin/status')).data);
      setStatusError(undefined);
    } catch (error) {
      setStatusError(error instanceof Error ? error.message : String(error));
    }
  }, []);
  useEffect(() => {
    if (!signedIn) return;
    void refreshStatus();
    const timer = setInterval(() => void refreshStatus(), STATUS_EVERY_MS);
    return () => clearInterval(timer);
  }, [signedIn, refreshStatus]);

  if (!signedIn) return html`<${SignIn} notice=${notice} onSignedIn=${() => (setNotice(undefined), setSignedIn(true))} />`;
  return html`<header>
      <h1>Plant Store console</h1>
      <nav aria-label="Views">
        ${VIEWS.map(([id, label]) => html`<button type="button" class="tab" aria-current=${view === id ? 'page' : undefined} onClick=${() => setView(id)}>${label}</button>`)}
      </nav>
      <button type="button" class="sign-out" onClick=${() => signOut()}>Sign out</button>
    </header>
    <${StatusStrip} status=${status} error=${statusError} />
    <main>
      ${view === 'stores' && html`<${StoresView} catalogVersion=${status?.catalog_version} onChanged=${refreshStatus} />`}
      ${view === 'import' && html`<${ImportView} onChanged=${refreshStatus} />`} ${view === 'holidays' && html`<${HolidaysView} onChanged=${refreshStatus} />`}
      ${view === 'tokens' && html`<${TokensView} />`}
    </main>`;
}

render(html`<${App} />`, document.getElementById('app')!);
