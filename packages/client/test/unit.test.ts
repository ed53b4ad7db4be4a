import { Buffer } from 'node:buffer';
import { createServer, type AddressInfo } from 'node:net';
import { encodeFrame, FrameDecoder, FrameTooLargeError, parseJsonFrame } from '@portcullis/protocol';
import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_BACKOFF, parseRefreshResponse, PortcullisClient, PortcullisClientError } from '../src/index.js';
import { tcpTransport } from '../src/node.js';

/** A fake `/auth` that answers from a script and records what was asked (no token is asserted on, only routes). */
function scriptedFetch(answers: Record<string, Array<[number, unknown]>>) {
  const calls: string[] = [];
  const fetch = async (input: string): Promise<Response> => {
    const path = new URL(input).pathname;
    calls.push(path);
    await new Promise((r) => setTimeout(r, 5));
    const [status, body] = answers[path]?.shift() ?? [500, { error: 'internal', message: 'unscripted' }];
    return new Response(status === 204 ? null : JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  };
  return { fetch, calls };
}

const jwt = (exp: number): string => `h.${Buffer.from(JSON.stringify({ exp })).toString('base64url')}.s`;
const later = Math.floor(Date.now() / 1000) + 3600;
const session = (n: number) => ({
  accessToken: `a${n};session`, refreshToken: `r${n};session`,
  accessExpiration: new Date(Date.now() + 3_600_000).toISOString(), refreshExpiration: new Date(Date.now() + 86_400_000).toISOString(),
});

describe('backoff', () => {
  it('grows exponentially, is capped, and is jittered between half and all of the step', () => {
    const at = (attempt: number, random: number) => backoffDelay(attempt, { ...DEFAULT_BACKOFF, random: () => random });
    expect([at(0, 0), at(0, 0.999)]).toEqual([125, 250]);
    expect([at(3, 0), at(3, 0.999)]).toEqual([1000, 1999]);
    expect(at(30, 0.999)).toBeLessThanOrEqual(DEFAULT_BACKOFF.maxDelayMs);
  });
});

describe('TCP frames', () => {
  it('decodes length-prefixed frames however the stream is chunked', () => {
    const bytes = Buffer.concat([encodeFrame(JSON.stringify({ id: 1 })), encodeFrame(JSON.stringify({ type: 'auth', ok: true }))]);
    const decoder = new FrameDecoder({ maxFrameBytes: 1024 });
    const out = [...bytes].flatMap((byte) => decoder.push(Buffer.from([byte])));
    expect(out.map((t) => parseJsonFrame(t))).toEqual([{ id: 1 }, { type: 'auth', ok: true }]);
  });

  it('refuses a frame announced over the limit', async () => {
    const oversized = encodeFrame(JSON.stringify({ long: 'x'.repeat(20) }));
    expect(() => new FrameDecoder({ maxFrameBytes: 8 }).push(oversized)).toThrow(FrameTooLargeError);
    const server = createServer((socket) => socket.end(oversized));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const open = tcpTransport({ port, maxFrameBytes: 8 }).open({ credential: null, baseUrl: 'http://game.test', handshakeTimeoutMs: 2000 }, { frame() {}, closed() {} });
      await expect(open).rejects.toThrow(PortcullisClientError);
      await expect(open).rejects.toMatchObject({ code: 'unexpected_response' });
    } finally {
      server.close();
    }
  });
});

describe('PortcullisClient token handling (scripted server)', () => {
  it('parses upgrade expirations as Dates and tells a session refresh from a login refresh', () => {
    const s = parseRefreshResponse(session(1));
    expect(s.kind).toBe('session');
    expect(s.kind === 'session' && s.tokens.accessExpiration).toBeInstanceOf(Date);
    expect(parseRefreshResponse({ accessToken: jwt(later), refreshToken: jwt(later) }).kind).toBe('login');
  });

  it('renews an expired session in order: session refresh refused, then JWT refresh, then upgrade', async () => {
    const { fetch, calls } = scriptedFetch({
      '/auth/refresh': [[401, { error: 'invalid_token', message: 'used' }], [200, { accessToken: jwt(later), refreshToken: jwt(later) }]],
      '/auth/upgrade': [[200, session(2)]],
    });
    const client = new PortcullisClient({ baseUrl: 'http://game.test', fetch, tokens: { login: { refreshToken: jwt(later) }, session: { ...session(1), accessExpiration: new Date(0) } as never } });
    await expect(client.credential('session')).resolves.toBe('a2;session');
    expect(calls).toEqual(['/auth/refresh', '/auth/refresh', '/auth/upgrade']);
    expect(client.tokens.login?.accessToken).toBeUndefined();
  });

  it('calls reauthenticate when every refresh token is refused, and fails not_authenticated without it', async () => {
    const script = () => scriptedFetch({
      '/auth/refresh': [[401, { error: 'invalid_token', message: 'used' }]],
      '/auth/login/unamepwd': [[200, { accessToken: jwt(later), refreshToken: jwt(later) }]],
    });
    const a = script();
    const withHook = new PortcullisClient({ baseUrl: 'http://game.test', fetch: a.fetch, tokens: { login: { refreshToken: jwt(later) } },
      reauthenticate: (c) => c.loginWithUsername('alice', 'pw-not-checked-here') });
    await expect(withHook.credential('jwt')).resolves.toMatch(/^h\./);
    expect(a.calls).toEqual(['/auth/refresh', '/auth/login/unamepwd']);
    const b = script();
    const without = new PortcullisClient({ baseUrl: 'http://game.test', fetch: b.fetch, tokens: { login: { refreshToken: jwt(later) } } });
    await expect(without.credential('jwt')).rejects.toMatchObject({ code: 'not_authenticated' });
  });

  it('maps error bodies and empty bearer challenges to codes with status and Retry-After', async () => {
    const fetch = async (input: string) => input.endsWith('unamepwd')
      ? new Response(JSON.stringify({ error: 'locked_out', message: 'later' }), { status: 429, headers: { 'retry-after': '60' } })
      : new Response(null, { status: 401 });
    const client = new PortcullisClient({ baseUrl: 'http://game.test', fetch, tokens: { login: { accessToken: jwt(later), refreshToken: jwt(later) } } });
    await expect(client.loginWithUsername('a', 'b')).rejects.toMatchObject({ code: 'locked_out', status: 429, retryAfterSeconds: 60 });
    await expect(client.api.logout('x')).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
  });

  it('reads 429 rate_limited with its Retry-After in seconds and milliseconds', async () => {
    const fetch = async () => new Response(JSON.stringify({ error: 'rate_limited', message: 'too many requests; retry later' }), { status: 429, headers: { 'retry-after': '3' } });
    const client = new PortcullisClient({ baseUrl: 'http://game.test', fetch });
    await expect(client.loginWithUsername('a', 'b')).rejects.toMatchObject({ code: 'rate_limited', status: 429, retryAfterSeconds: 3, retryAfterMs: 3000 });
  });
});
