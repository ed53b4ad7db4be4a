/**
 * Makes the example server also serve the browser test's page, the client's
 * compiled ES modules (packages/client/dist) under `/client/` and the protocol's
 * (packages/protocol/dist) under `/protocol/`, where the page's import map points
 * `@portcullis/protocol`; same origin as `/auth` and `/ws`, in front of the
 * example's own express app.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { dirname, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const DISTS: Readonly<Record<string, string>> = {
  '/client/': resolve(here, '../../dist'),
  '/protocol/': resolve(here, '../../../protocol/dist'),
};
const PAGE = resolve(here, '../browser/client-demo.html');

async function serve(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  let file: string | undefined;
  let type = 'text/javascript; charset=utf-8';
  if (path === '/client-demo.html') {
    file = PAGE;
    type = 'text/html; charset=utf-8';
  } else if (path.endsWith('.js')) {
    for (const [prefix, dist] of Object.entries(DISTS)) {
      if (!path.startsWith(prefix)) continue;
      const candidate = normalize(resolve(dist, `.${path.slice(prefix.length - 1)}`));
      if (candidate.startsWith(dist + sep)) file = candidate;
    }
  }
  if (file === undefined) return false;
  try {
    const body = await readFile(file);
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
  } catch {
    res.writeHead(404).end();
  }
  return true;
}

/**
 * Puts the static route in front of the server's existing request handler (the express app).
 *
 * @example
 * ```ts
 * serveClientPage(game.httpServer);
 * ```
 */
export function serveClientPage(server: Server): void {
  const handlers = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    void serve(req, res).then((served) => { if (!served) for (const handler of handlers) handler(req, res); });
  });
}
