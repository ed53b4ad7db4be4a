/**
 * The socketless HTTP connection the instruction count drives: it must count each response
 * once, however node writes it, and stop at the first answer that is not a 200.
 */
import express from 'express';
import { describe, expect, it } from 'vitest';
import { cannedConnection, inMemoryConnection } from '../../bench/lib/in-memory-http.js';

const REQUEST = 'GET /me HTTP/1.1\r\nHost: bench\r\nConnection: keep-alive\r\n\r\n';

describe('inMemoryConnection', () => {
  it('sends the next request only after the previous response is complete, counting each response once', async () => {
    let served = 0;
    const app = express();
    app.get('/me', (_req, res) => {
      served++;
      // Head, then the body in two writes: three chunks for one response.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '18' });
      res.write('{"id":');
      setImmediate(() => res.end('"player-42"}'));
    });
    await inMemoryConnection(app, REQUEST)(25);
    expect(served).toBe(25);
    await inMemoryConnection(app, REQUEST)(0);
    expect(served).toBe(25);
  });

  it('rejects at the first answer that is not a 200', async () => {
    const app = express();
    let served = 0;
    app.get('/me', (_req, res) => (++served === 3 ? res.status(401).json({ error: 'unauthorized' }) : res.json({ id: 'p' })));
    await expect(inMemoryConnection(app, REQUEST)(10)).rejects.toThrow('answered 401, expected 200');
    expect(served).toBe(3);
  });
});

describe('cannedConnection', () => {
  it('answers every request with the fixed response', async () => {
    await expect(cannedConnection('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}', REQUEST)(50)).resolves.toBeUndefined();
    await expect(cannedConnection('HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n', REQUEST)(5)).rejects.toThrow('answered 503');
  });
});
