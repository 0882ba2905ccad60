import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { api, ApiError } from './api.js';
import { fieldErrors, Pager, useListPage } from './parts.js';
import type { IssuedToken as Issued, Token } from './schema.js';

const PAGE = 20;
const CREATE_FIELDS = ['team', 'name', 'scope', 'expires_in_days'] as const;

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '');

function state(token: Token): string {
  if (token.revoked_at) return 'revoked';
  if (token.expires_at && new Date(token.expires_at).getTime() <= Date.now()) return 'expired';
  if (token.replaced_by !== null) return `rotated (now token ${token.replaced_by})`;
  return 'active';
}

/** A token shown once: the copy button, and the warning that it cannot be shown again. */
function ShownOnce({ issued, onClose }: { issued: Issued; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(issued.token);
    setCopied(true);
  };
  return html`<div class="shown-once" role="alert">
    <p><strong>Copy this token now: it will not be shown again.</strong> The service keeps only its digest.</p>
    ${
      'replaces' in issued &&
      html`<p>
        It replaces token ${issued.replaces.id}, which keeps working until ${issued.replaces.expires_at ? when(issued.replaces.expires_at) : 'it is revoked'}
        (the grace period), then stops.
      </p>`
    }
    <label for="issued-token">Token ${issued.id} for team ${issued.team} (${issued.scope})</label>
    <input id="issued-token" readonly value=${issued.token} size="60" onFocus=${(e: Event) => (e.target as HTMLInputElement).select()} />
    <button type="button" onClick=${() => void copy()}>${copied ? 'Copied' : 'Copy'}</button>
    <button type="button" onClick=${onClose}>Done</button>
  </div>`;
}

function CreateToken({ onIssued }: { onIssued: (issued: Issued) => void }) {
  const [form, setForm] = useState({ team: '', name: '', scope: 'write', expires_in_days: '' });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const submit = async (event: Event) => {
    event.preventDefault();
    const body: Record<string, unknown> = { team: form.team, scope: form.scope };
    if (form.name) body.name = form.name;
    // A number when it reads as one; otherwise as typed, so that the API's own text says what is wrong.
    if (form.expires_in_days) body.expires_in_days = /^\d+$/.test(form.expires_in_days) ? Number(form.expires_in_days) : form.expires_in_days;
    try {
      const { data } = await api<Issued>('POST', '/admin/tokens', body);
      setErrors({});
      setForm({ ...form, name: '' });
      onIssued(data);
    } catch (error) {
      setErrors(error instanceof ApiError ? fieldErrors(error, CREATE_FIELDS) : { '': String(error) });
    }
  };
  const input = (field: 'team' | 'name' | 'expires_in_days', label: string, hint?: string) =>
    html`<div class="field">
      <label for=${`token-${field}`}>${label}</label>
      <input
        id=${`token-${field}`}
        value=${form[field]}
        aria-invalid=${errors[field] ? 'true' : undefined}
        aria-describedby=${hint ? `token-${field}-hint` : undefined}
        onInput=${(e: Event) => setForm({ ...form, [field]: (e.target as HTMLInputElement).value })}
      />
      ${hint && html`<span class="hint" id=${`token-${field}-hint`}>${hint}</span>`} ${errors[field] && html`<span class="error">${errors[field]}</span>`}
    </div>`;
  return html`<form class="create-token" onSubmit=${submit} aria-labelledby="create-token-heading">
    <h3 id="create-token-heading">Issue a token</h3>
    ${errors[''] && html`<p class="error" role="alert">${errors['']}</p>`}
    <div class="fields">
      ${input('team', 'Team')} ${input('name', 'Name (optional)')}
      <div class="field">
        <label for="token-scope">Scope</label>
        <select id="token-scope" value=${form.scope} onChange=${(e: Event) => setForm({ ...form, scope: (e.target as HTMLSelectElement).value })}>
          <option value="read">read</option>
          <option value="write">write</option>
          <option value="admin">admin</option>
        </select>
        ${errors.scope && html`<span class="error">${errors.scope}</span>`}
      </div>
      ${input('expires_in_days', 'Expires in (days)', 'Empty: the service default (TOKEN_DEFAULT_TTL_DAYS)')}
    </div>
    <button type="submit">Issue</button>
  </form>`;
}

export function TokensView() {
  const [team, setTeam] = useState('');
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const [issued, setIssued] = useState<Issued>();
  const [grace, setGrace] = useState('86400');
  const [reloads, setReloads] = useState(0);

  const { page, error, setError } = useListPage<Token>('/admin/tokens', { limit: String(PAGE), after: cursors[cursors.length - 1], team: team.trim() }, [
    reloads,
  ]);

  const act = async (action: () => Promise<unknown>) => {
    try {
      await action();
      setError(undefined);
      setReloads((n) => n + 1);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    }
  };
  const rotate = (token: Token) =>
    act(async () => {
      const body = { grace_seconds: /^\d+$/.test(grace) ? Number(grace) : grace };
      setIssued((await api<Issued>('POST', `/admin/tokens/${token.id}/rotate`, body)).data);
    });
  const revoke = (token: Token) => {
    if (!window.confirm(`Revoke token ${token.id} (${token.prefix}…, team ${token.team})? It stops working within seconds, everywhere.`)) return;
    void act(() => api('DELETE', `/admin/tokens/${token.id}`));
  };

  return html`<div class="tokens">
    <section aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Tokens</h2>
      ${issued && html`<${ShownOnce} issued=${issued} onClose=${() => setIssued(undefined)} />`}
      <${CreateToken} onIssued=${(token: Issued) => (setIssued(token), setReloads((n) => n + 1))} />
      <form class="inline" onSubmit=${(e: Event) => e.preventDefault()}>
        <label for="tokens-team">Team</label>
        <input id="tokens-team" type="search" value=${team} onInput=${(e: Event) => (setTeam((e.target as HTMLInputElement).value), setCursors([undefined]))} />
        <label for="tokens-grace">Grace period when rotating (seconds)</label>
        <input id="tokens-grace" inputmode="numeric" size="8" value=${grace} onInput=${(e: Event) => setGrace((e.target as HTMLInputElement).value)} />
      </form>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <table>
        <caption class="visually-hidden">
          Tokens by id
        </caption>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Team</th>
            <th scope="col">Name</th>
            <th scope="col">Scope</th>
            <th scope="col">Prefix</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used</th>
            <th scope="col">State</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          ${page?.items.map(
            (token) =>
              html`<tr data-token-id=${token.id}>
                <td>${token.id}</td>
                <td>${token.team}</td>
                <td>${token.name ?? ''}</td>
                <td>${token.scope}</td>
                <td><code>${token.prefix}</code></td>
                <td>${when(token.created_at)}</td>
                <td>${when(token.expires_at) || 'never'}</td>
                <td>${when(token.last_used_at)}</td>
                <td>${state(token)}</td>
                <td>
                  ${
                    state(token) === 'active' &&
                    html`<button type="button" onClick=${() => void rotate(token)} aria-label=${`Rotate token ${token.id}`}>Rotate</button>
                      <button type="button" class="danger" onClick=${() => revoke(token)} aria-label=${`Revoke token ${token.id}`}>Revoke</button>`
                  }
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
      <${Pager} cursors=${cursors} next=${page?.next} onChange=${setCursors} />
    </section>
  </div>`;
}
