import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api.js';
import { fieldErrors } from './parts.js';
import type { Holiday } from './schema.js';

const FORM_FIELDS = ['date', 'name', 'hours', 'states'] as const;
type HolidayForm = Record<(typeof FORM_FIELDS)[number], string>;
const EMPTY: HolidayForm = { date: '', name: '', hours: 'Closed', states: '' };

/**
 * The chain's holiday calendar (GET /admin/holidays), by date, with a form that sets one (PUT: a
 * date already set is replaced) and a button that deletes one. The API's texts are shown as they
 * are; the states are typed comma-separated and sent as the list the API takes (empty: every store).
 */
export function HolidaysView({ onChanged }: { onChanged: () => void }) {
  const [holidays, setHolidays] = useState<Holiday[]>();
  const [error, setError] = useState<string>();
  const [form, setForm] = useState<HolidayForm>(EMPTY);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [refresh, setRefresh] = useState(0);
  useEffect(() => {
    let current = true;
    api<Holiday[]>('GET', '/admin/holidays').then(
      ({ data }) => current && (setHolidays(data), setError(undefined)),
      (failure: unknown) => current && setError(failure instanceof Error ? failure.message : String(failure)),
    );
    return () => void (current = false);
  }, [refresh]);
  const changed = () => {
    setRefresh((n) => n + 1);
    onChanged();
  };
  const save = async (event: Event) => {
    event.preventDefault();
    const states = form.states
      .split(',')
      .map((state) => state.trim())
      .filter(Boolean);
    try {
      // The date is the path: one that is no date is the API's 400, shown above the form.
      await api('PUT', `/admin/holidays/${encodeURIComponent(form.date)}`, { name: form.name, hours: form.hours, ...(states.length > 0 && { states }) });
      setErrors({});
      setForm(EMPTY);
      changed();
    } catch (failure) {
      setErrors(failure instanceof ApiError ? fieldErrors(failure, FORM_FIELDS) : { '': String(failure) });
    }
  };
  const remove = async (date: string) => {
    try {
      await api('DELETE', `/admin/holidays/${date}`);
      changed();
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    }
  };
  return html`<section aria-label="Holidays">
    <h2>Holidays</h2>
    <p class="hint">
      On a holiday's date, in each store's own calendar, the stores of its states (every store when it names none) keep its hours, unless a special day or a
      temporary closure of their own decides the day. Searches follow a change within seconds.
    </p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${
      holidays &&
      (holidays.length === 0
        ? html`<p>No holidays.</p>`
        : html`<table class="holidays">
            <thead>
              <tr>
                <th>Date</th>
                <th>Name</th>
                <th>Hours</th>
                <th>States</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              ${holidays.map(
                (holiday) =>
                  html`<tr key=${holiday.date}>
                    <td>${holiday.date}</td>
                    <td>${holiday.name}</td>
                    <td>${holiday.hours}</td>
                    <td>${holiday.states?.join(', ') ?? 'every store'}</td>
                    <td><button type="button" class="danger" onClick=${() => void remove(holiday.date)}>Delete ${holiday.date}</button></td>
                  </tr>`,
              )}
            </tbody>
          </table>`)
    }
    <form class="holiday-form" onSubmit=${save} aria-label="Set a holiday">
      <h3>Set a holiday</h3>
      ${errors[''] && html`<p class="error" role="alert">${errors['']}</p>`}
      <div class="fields">
        ${FORM_FIELDS.map(
          (field) =>
            html`<div class="field">
              <label for=${`holiday-${field}`}>${field}</label>
              <input
                id=${`holiday-${field}`}
                value=${form[field]}
                placeholder=${{ date: '2026-12-25', name: 'Christmas Day', hours: 'Closed or 9:00 AM - 2:00 PM', states: 'NY, NJ (empty: every store)' }[field]}
                aria-invalid=${errors[field] ? 'true' : undefined}
                onInput=${(e: Event) => setForm({ ...form, [field]: (e.target as HTMLInputElement).value })}
              />
              ${errors[field] && html`<span class="error">${errors[field]}</span>`}
            </div>`,
        )}
      </div>
      <button type="submit">Save holiday</button>
    </form>
  </section>`;
}
