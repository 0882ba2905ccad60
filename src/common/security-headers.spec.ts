import { once } from 'node:events';
import { createServer, get, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import helmet from 'helmet';
import { HELMET_OPTIONS, securityHeaders } from './security-headers.js';

/** The headers helmet itself puts on a real response. */
async function helmetOnALiveResponse(): Promise<IncomingHttpHeaders> {
  const middleware = helmet(HELMET_OPTIONS);
  const server = createServer((req, res) => middleware(req, res, () => res.end('ok')));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    const [res] = (await once(get({ host: '127.0.0.1', port, path: '/plants' }), 'response')) as [import('node:http').IncomingMessage];
    res.resume();
    return res.headers;
  } finally {
    server.close();
  }
}

describe('securityHeaders', () => {
  it("are exactly the headers helmet sets on a live response, values included", async () => {
    const live = await helmetOnALiveResponse();
    const own = ['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'];
    const fromHelmet = Object.entries(live).filter(([name]) => !own.includes(name));
    const computed = securityHeaders().map(([name, value]) => [name.toLowerCase(), value]);
    expect(Object.fromEntries(computed)).toEqual(Object.fromEntries(fromHelmet));
    expect(computed.length).toBeGreaterThanOrEqual(10);
    expect(Object.fromEntries(computed)['content-security-policy']).toContain("default-src 'self'");
  });

  it('refuses a CSP directive computed per request (a nonce), which cannot be worked out once', () => {
    expect(() => securityHeaders({ contentSecurityPolicy: { directives: { scriptSrc: ["'self'", () => "'nonce-abc'"] } } })).toThrow(/depends on the request/);
  });
});
