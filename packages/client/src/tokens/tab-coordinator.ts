/**
 * One refresh for every tab of an origin. Tabs that restored the same tokens would
 * otherwise each present the same refresh token, and the second presentation reads as
 * theft on the server. Under a Web Lock (or, without Web Locks, after a short claim
 * round on a BroadcastChannel) one tab refreshes; it leaves the answer in
 * `localStorage`, sealed (AES-GCM) under the refresh token it used, and announces it,
 * so every tab holding that same token takes the answer instead of presenting it again.
 */

/** What a tab shares: the refresh token's kind and its successor, as JSON-safe data. */
export interface SharedRotation {
  readonly kind: 'session' | 'login';
  readonly tokens: unknown;
}

/**
 * Runs one refresh per refresh token across the tabs of an origin.
 *
 * @example
 * ```ts
 * const coordinator = browserTabCoordinator('https://game.example.com');
 * const next = await coordinator?.refresh(token, () => api.refresh(token));
 * ```
 */
export interface TabCoordinator {
  /** The rotation of `usedToken`: another tab's if it already made one, else `refresh()`'s, shared. */
  refresh(usedToken: string, refresh: () => Promise<SharedRotation>): Promise<SharedRotation>;
  /** Hears rotations made in other tabs; `open` reads one if it used up `heldToken`. */
  onRotation(listener: (open: (heldToken: string) => Promise<SharedRotation | undefined>) => void): () => void;
}

interface Browserish {
  readonly navigator?: { readonly locks?: { request(name: string, callback: () => Promise<unknown>): Promise<unknown> } };
  readonly localStorage?: Storage;
  readonly BroadcastChannel?: typeof BroadcastChannel;
  readonly crypto?: Crypto;
}

/** How long a shared answer stays readable: tabs that wake later refresh with what they adopted. */
const KEEP_MS = 120_000;
const CLAIM_WINDOW_MS = 60;
/** Storage written in one tab reaches another a little later: how long a tab looks again before refreshing itself. */
const SETTLE_MS = 150;
const WAIT_FOR_ANSWER_MS = 5_000;
const encoder = new TextEncoder();

/**
 * The coordinator of the browser this runs in; undefined outside a browser page (Node)
 * or without `localStorage`, `crypto.subtle` and either Web Locks or BroadcastChannel.
 *
 * @example
 * ```ts
 * const coordinator = browserTabCoordinator(location.origin);
 * ```
 */
export function browserTabCoordinator(scope: string, env: Browserish = globalThis as Browserish): TabCoordinator | undefined {
  const storage = env.localStorage;
  const subtle = env.crypto?.subtle;
  const locks = env.navigator?.locks;
  const Channel = env.BroadcastChannel;
  if (storage === undefined || subtle === undefined || (locks === undefined && Channel === undefined)) return undefined;
  const name = `portcullis:refresh:${scope}`;
  const channel = Channel === undefined ? undefined : new Channel(name);
  const listeners = new Set<Parameters<TabCoordinator['onRotation']>[0]>();
  const claims = new Map<string, Set<string>>();
  const answered = new Map<string, () => void>();

  const keyOf = async (token: string) => `${name}:${hex(await subtle.digest('SHA-256', encoder.encode(token)))}`;
  const sealKey = async (token: string) =>
    subtle.importKey('raw', await subtle.digest('SHA-256', encoder.encode(`portcullis tab rotation\0${token}`)), 'AES-GCM', false, ['encrypt', 'decrypt']);

  /** Answers announced on the channel, by key: they may arrive before the storage write does. */
  const announced = new Map<string, string>();
  const read = async (token: string): Promise<SharedRotation | undefined> => {
    const key = await keyOf(token);
    const stored = storage.getItem(key) ?? announced.get(key) ?? null;
    if (stored === null) return undefined;
    try {
      const { iv, body, until } = JSON.parse(stored) as { iv: string; body: string; until: number };
      if (Date.now() > until) return undefined;
      const plain = await subtle.decrypt({ name: 'AES-GCM', iv: unhex(iv) }, await sealKey(token), unhex(body));
      return JSON.parse(new TextDecoder().decode(plain)) as SharedRotation;
    } catch {
      return undefined;
    }
  };

  const share = async (token: string, rotation: SharedRotation): Promise<void> => {
    const iv = env.crypto!.getRandomValues(new Uint8Array(12));
    const body = await subtle.encrypt({ name: 'AES-GCM', iv }, await sealKey(token), encoder.encode(JSON.stringify(rotation)));
    const key = await keyOf(token);
    sweep(storage, name);
    const sealed = JSON.stringify({ iv: hex(iv), body: hex(body), until: Date.now() + KEEP_MS });
    storage.setItem(key, sealed);
    channel?.postMessage({ type: 'rotated', key, sealed });
  };

  channel?.addEventListener('message', (event: MessageEvent) => {
    const message = event.data as { type?: string; key?: string; nonce?: string };
    if (typeof message?.key !== 'string') return;
    if (message.type === 'claim' && typeof message.nonce === 'string') claims.get(message.key)?.add(message.nonce);
    if (message.type !== 'rotated') return;
    if (typeof (message as { sealed?: unknown }).sealed === 'string') announced.set(message.key, (message as { sealed: string }).sealed);
    answered.get(message.key)?.();
    for (const listener of listeners) listener(async (held) => ((await keyOf(held)) === message.key ? read(held) : undefined));
  });

  const once = async (token: string, refresh: () => Promise<SharedRotation>): Promise<SharedRotation> => {
    const earlier = (await read(token)) ?? (await settled(token));
    if (earlier !== undefined) return earlier;
    const rotation = await refresh();
    await share(token, rotation);
    return rotation;
  };

  /** Looks again for a little while: another tab's answer may still be on its way here. */
  const settled = async (token: string): Promise<SharedRotation | undefined> => {
    const until = Date.now() + SETTLE_MS;
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const answer = await read(token);
      if (answer !== undefined) return answer;
    }
    return undefined;
  };

  /** Without Web Locks: every tab about to refresh claims; the smallest claim refreshes, the others wait for its answer. */
  const claimed = async (token: string, refresh: () => Promise<SharedRotation>): Promise<SharedRotation> => {
    const earlier = await read(token);
    if (earlier !== undefined) return earlier;
    const key = await keyOf(token);
    const nonce = hex(env.crypto!.getRandomValues(new Uint8Array(8)));
    const seen = new Set<string>([nonce]);
    claims.set(key, seen);
    const answer = new Promise<void>((resolve) => answered.set(key, resolve));
    channel!.postMessage({ type: 'claim', key, nonce });
    await new Promise((resolve) => setTimeout(resolve, CLAIM_WINDOW_MS));
    claims.delete(key);
    if ([...seen].sort()[0] === nonce) {
      answered.delete(key);
      return once(token, refresh);
    }
    await Promise.race([answer, new Promise((resolve) => setTimeout(resolve, WAIT_FOR_ANSWER_MS))]);
    answered.delete(key);
    return (await read(token)) ?? once(token, refresh);
  };

  return {
    refresh(usedToken, refresh) {
      if (locks !== undefined) return locks.request(name, () => once(usedToken, refresh)) as Promise<SharedRotation>;
      return claimed(usedToken, refresh);
    },
    onRotation(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

function sweep(storage: Storage, name: string): void {
  for (let i = storage.length - 1; i >= 0; i--) {
    const key = storage.key(i);
    if (key === null || !key.startsWith(`${name}:`)) continue;
    try {
      if (Date.now() > (JSON.parse(storage.getItem(key) ?? '{}') as { until?: number }).until!) storage.removeItem(key);
    } catch {
      storage.removeItem(key);
    }
  }
}

function hex(bytes: ArrayBuffer | Uint8Array): string {
  return Array.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}

function unhex(text: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}
