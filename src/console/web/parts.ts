import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { WEEKDAYS, type Weekday } from '../../shared/weekdays.js';
import { api, nextCursor, type Problem } from './api.js';

// Small pieces the views share.

export type WeekHours = Record<Weekday, string>;

export function Hours({ hours }: { hours: WeekHours }) {
  return html`<dl class="hours">
    ${WEEKDAYS.map(
      (day) =>
        html`<dt>${day[0].toUpperCase()}${day.slice(1, 3)}</dt>
          <dd>${hours[day]}</dd>`,
    )}
  </dl>`;
}

/**
 * A refused request's problems by field, from the API's `problems` (data, not a message taken
 * apart): each goes next to the field it names (`special_hours[1].date` goes to `special_hours`),
 * the rest, and a refusal without problems (its message), above the form (key ''). The texts are
 * the API's own: the field's path and its message.
 */
export function fieldErrors(error: { message: string; problems: readonly Problem[] }, fields: readonly string[]): Record<string, string> {
  if (error.problems.length === 0) return { '': error.message };
  const errors: Record<string, string> = {};
  for (const { field, message } of error.problems) {
    const top = field?.split(/[[.]/)[0];
    const key = top && fields.includes(top) ? top : '';
    const text = field ? `${field}: ${message}` : message;
    errors[key] = errors[key] ? `${errors[key]}; ${text}` : text;
  }
  return errors;
}

/**
 * Previous and next for the API's keyset pages: `cursors` is the stack of `after` values that
 * led to this page (undefined for the first), `next` the `after` of the `Link: rel="next"`.
 */
export function Pager({
  cursors,
  next,
  onChange,
}: {
  cursors: Array<string | undefined>;
  next?: string;
  onChange: (cursors: Array<string | undefined>) => void;
}) {
  return html`<div class="pager">
    <button type="button" disabled=${cursors.length === 1} onClick=${() => onChange(cursors.slice(0, -1))}>Previous page</button>
    <button type="button" disabled=${next === undefined} onClick=${() => next !== undefined && onChange([...cursors, next])}>Next page</button>
  </div>`;
}

/**
 * One page of an admin list: `query` (limit, after, filters; empty values left out) as the API
 * takes it, loaded again when it or anything in `refresh` changes. `next` is the `after` of the
 * `Link` header's next page; `error` the API's text.
 */
export function useListPage<T>(path: string, query: Record<string, string | undefined>, refresh: readonly unknown[]) {
  const [page, setPage] = useState<{ items: T[]; next?: string }>();
  const [error, setError] = useState<string>();
  const search = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => Boolean(entry[1]))).toString();
  useEffect(() => {
    let current = true;
    api<T[]>('GET', `${path}?${search}`).then(
      ({ data, headers }) => {
        if (!current) return;
        setPage({ items: data, next: nextCursor(headers.get('Link')) });
        setError(undefined);
      },
      (failure: unknown) => current && setError(failure instanceof Error ? failure.message : String(failure)),
    );
    return () => void (current = false);
  }, [path, search, ...refresh]);
  return { page, error, setError };
}

/** "12.3 MB" */
export function bytes(count: number): string {
  if (count < 1024) return `${count} B`;
  if (count < 1024 * 1024) return `${(count / 1024).toFixed(1)} KB`;
  return `${(count / 1024 / 1024).toFixed(1)} MB`;
}
