import 'reflect-metadata';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/load-config.js';
import { SiteverifyCaptchaVerifier } from './siteverify-captcha-verifier.js';

/** A local stand-in for the provider's siteverify endpoint. */
let server: Server;
let base: string;
const received: Array<Record<string, string>> = [];

async function readForm(req: IncomingMessage): Promise<Record<string, string>> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return Object.fromEntries(new URLSearchParams(text));
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const form = await readForm(req);
    received.push({ ...form, contentType: req.headers['content-type'] ?? '' });
    if (req.url === '/slow') return setTimeout(() => res.end('{"success":true}'), 1000);
    if (req.url === '/broken') return res.writeHead(500).end('oops');
    if (req.url === '/garbage') return res.writeHead(200).end('not json');
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ success: form.secret === 'server-secret' && form.response === 'solved', 'error-codes': [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function verifier(provider: string, path = '/siteverify', secret = 'server-secret', timeoutMs?: number) {
  const config = loadConfig({
    env: { SVC__SECURITY__CAPTCHA__PROVIDER: provider, SVC__SECURITY__CAPTCHA__SECRET_KEY: secret, SVC__SECURITY__CAPTCHA__VERIFY_URL: `${base}${path}` },
    tree: {},
  });
  return SiteverifyCaptchaVerifier.create(config, { timeoutMs });
}

describe('SiteverifyCaptchaVerifier', () => {
  it.each(['recaptcha', 'hcaptcha', 'turnstile'])('%s: posts secret, response and remoteip as a form and trusts only success: true', async (provider) => {
    received.length = 0;
    const captcha = verifier(provider);
    expect(captcha.enabled).toBe(true);
    expect(await captcha.verify('solved', '203.0.113.7')).toBe(true);
    expect(await captcha.verify('wrong')).toBe(false);
    expect(received[0]).toEqual({ secret: 'server-secret', response: 'solved', remoteip: '203.0.113.7', contentType: 'application/x-www-form-urlencoded' });
    expect(received[1]).not.toHaveProperty('remoteip');
  });

  it('is off, and passes everything without a request, when the secret key is empty', async () => {
    received.length = 0;
    const captcha = SiteverifyCaptchaVerifier.create(loadConfig({ env: {}, tree: {} }));
    expect(captcha.enabled).toBe(false);
    expect(await captcha.verify(undefined)).toBe(true);
    expect(received).toHaveLength(0);
  });

  it('refuses a missing or empty token without asking the provider', async () => {
    received.length = 0;
    const captcha = verifier('turnstile');
    expect(await captcha.verify(undefined)).toBe(false);
    expect(await captcha.verify('')).toBe(false);
    expect(received).toHaveLength(0);
  });

  it('fails closed on a timeout, an error status, a body that is not JSON and an unreachable provider', async () => {
    expect(await verifier('hcaptcha', '/slow', 'server-secret', 100).verify('solved')).toBe(false);
    expect(await verifier('hcaptcha', '/broken').verify('solved')).toBe(false);
    expect(await verifier('hcaptcha', '/garbage').verify('solved')).toBe(false);
    const unreachable = SiteverifyCaptchaVerifier.create(loadConfig({
      env: { SVC__SECURITY__CAPTCHA__PROVIDER: 'recaptcha', SVC__SECURITY__CAPTCHA__SECRET_KEY: 's', SVC__SECURITY__CAPTCHA__VERIFY_URL: 'http://127.0.0.1:1/' },
      tree: {},
    }));
    expect(await unreachable.verify('solved')).toBe(false);
  });

  it("uses the provider's public endpoint unless captcha:verify-url overrides it", () => {
    const config = loadConfig({ env: { SVC__SECURITY__CAPTCHA__PROVIDER: 'turnstile', SVC__SECURITY__CAPTCHA__SECRET_KEY: 's' }, tree: {} });
    expect(config.security.captcha.verifyUrl).toBe('https://challenges.cloudflare.com/turnstile/v0/siteverify');
  });
});
