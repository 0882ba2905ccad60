// The console's only way to the service: the admin API, with the token of this tab. The token
// lives in sessionStorage (gone when the tab closes), is sent in the Authorization header only,
// and never goes into a URL, a log line or localStorage.

const TOKEN_KEY = 'plant-store-console.token';

export const session = {
  get token(): string | null {
    return sessionStorage.getItem(TOKEN_KEY);
  },
  set token(token: string | null) {
    if (token === null) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  },
};

/** An answer other than 2xx: its status and the API's own message (`{"error", "message"}`). */
/** One problem of a refused admin request, as the API answers it beside the message (AdminProblem). */
export interface Problem {
  field?: string;
  line?: number;
  column?: string | null;
  code: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The problems as data, when the API gave them (a refused body or file); empty otherwise. */
    readonly problems: readonly Problem[] = [],
  ) {
    super(message);
  }
}

/** Called when the API answers 401: the token was revoked or has expired meanwhile. */
let signedOut: (message: string) => void = () => undefined;
export function onSignedOut(handler: (message: string) => void): void {
  signedOut = handler;
}

async function failure(response: Response): Promise<ApiError> {
  let message = `${response.status} ${response.statusText}`;
  let problems: Problem[] = [];
  try {
    const body = (await response.json()) as { message?: unknown; problems?: unknown };
    if (typeof body.message === 'string') message = body.message;
    if (Array.isArray(body.problems)) problems = body.problems as Problem[];
  } catch {
    // Not the API's error body (a proxy's page, a cut connection): the status line says it.
  }
  return new ApiError(response.status, message, problems);
}

export interface Answer<T> {
  data: T;
  headers: Headers;
}

/** One request of the admin API; `token` for the sign-in check, before the token is kept. */
export async function api<T>(method: string, path: string, body?: unknown, token = session.token): Promise<Answer<T>> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token ?? ''}`, Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  if (!response.ok) {
    const error = await failure(response);
    if (response.status === 401 && token === session.token) signedOut(error.message);
    throw error;
  }
  const data = (response.status === 204 ? undefined : await response.json()) as T;
  return { data, headers: response.headers };
}

/** A GET of a file (the CSV export): the answer, to read as text or as a blob. */
export async function apiFile(path: string): Promise<Response> {
  const response = await fetch(path, { headers: { Authorization: `Bearer ${session.token ?? ''}` }, cache: 'no-store' });
  if (!response.ok) {
    const error = await failure(response);
    if (response.status === 401) signedOut(error.message);
    throw error;
  }
  return response;
}

/** The `after` cursor of a `Link: <…>; rel="next"` header, if more follow. */
export function nextCursor(link: string | null): string | undefined {
  const target = link && /<([^>]+)>;\s*rel="next"/.exec(link)?.[1];
  return target ? (new URL(target, location.origin).searchParams.get('after') ?? undefined) : undefined;
}

export interface UploadProgress {
  sent: number;
  total: number;
  /** Seconds left at the rate so far; undefined until there is a rate. */
  secondsLeft?: number;
}

/**
 * POSTs a file as text/csv with progress (fetch cannot report upload progress; XMLHttpRequest
 * can), with any `headers` besides (If-Match). Resolves with the parsed body of a 2xx and the
 * answer's headers, rejects with the ApiError of any other answer.
 */
export function uploadCsv<T>(
  path: string,
  file: Blob,
  onProgress: (progress: UploadProgress) => void,
  headers: Record<string, string> = {},
): Promise<Answer<T>> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    const started = performance.now();
    xhr.open('POST', path);
    xhr.setRequestHeader('Authorization', `Bearer ${session.token ?? ''}`);
    xhr.setRequestHeader('Content-Type', 'text/csv');
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (event) => {
      const seconds = (performance.now() - started) / 1000;
      const rate = event.loaded / seconds;
      onProgress({
        sent: event.loaded,
        total: event.total || file.size,
        secondsLeft: rate > 0 && seconds > 0.2 ? (file.size - event.loaded) / rate : undefined,
      });
    };
    xhr.onload = () => {
      let body: { message?: unknown } | undefined;
      try {
        body = JSON.parse(xhr.responseText) as { message?: unknown };
      } catch {
        body = undefined;
      }
      if (xhr.status >= 200 && xhr.status < 300) return resolve({ data: body as T, headers: responseHeaders(xhr) });
      const message = typeof body?.message === 'string' ? body.message : `${xhr.status} ${xhr.statusText}`;
      if (xhr.status === 401) signedOut(message);
      reject(new ApiError(xhr.status, message));
    };
    xhr.onerror = () => reject(new ApiError(0, 'the upload failed: the service could not be reached'));
    xhr.send(file);
  });
}

/** An XMLHttpRequest's response headers as fetch's Headers. */
function responseHeaders(xhr: XMLHttpRequest): Headers {
  const headers = new Headers();
  for (const line of xhr
    .getAllResponseHeaders()
    .trim()
    .split(/[\r\n]+/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  return headers;
}
