import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

/**
 * The Prometheus endpoint on a listener of its own (plain node:http): GET /metrics and
 * nothing else, no token, none of the public pipeline, so a scrape neither counts as a
 * request nor waits behind one. Rejects with a message naming METRICS_PORT when the port
 * cannot be bound, which stops start-up (contract §6).
 */
export function startMetricsServer(registry: Registry, port: number, host: string): Promise<Server> {
  const server = createServer((req, res) => {
    const path = req.url?.split('?', 1)[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found: the metrics are at GET /metrics\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end('Method not allowed\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' }).end(req.method === 'HEAD' ? undefined : text),
      (error: unknown) =>
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`metrics failed: ${error instanceof Error ? error.message : String(error)}\n`),
    );
  });
  // A scraper keeps its connection; it must not hold the process open at shutdown.
  server.unref();
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          `METRICS_PORT=${port}: cannot listen on ${host}:${port} (${error.code ?? error.message}); set another METRICS_PORT, or 0 to turn metrics off`,
        ),
      ),
    );
    server.listen(port, host, () => resolve(server));
  });
}
