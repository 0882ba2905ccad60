import type { Request } from 'express';

/**
 * The `Link` header of a list's next page (RFC 8288): the list's path with its query as given
 * (`limit`, the filters) and `after` moved on; a parameter the request left out stays out.
 */
export function nextPageLink(req: Request, path: string, query: Record<string, string | number | undefined>): string {
  const next = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) next.set(name, String(value));
  return `<${req.baseUrl}${path}?${next.toString()}>; rel="next"`;
}
