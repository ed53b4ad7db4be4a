/**
 * One refresh for every tab of an origin. Tabs that restored the same tokens would
 * otherwise each present the same refresh token, and the second presentation reads as
 * theft on the server. Under a Web Lock (or, without Web Locks, after a short claim
 * round on a BroadcastChannel) one tab refreshes; before it lets go of the lock it
 * commits the answer to IndexedDB, keyed by the digest of the refresh token it spent
 * and sealed (AES-GCM) under that token, then announces it. A tab that takes the lock
 * next reads IndexedDB first: a committed IndexedDB transaction is seen by every later
 * transaction of the origin, so that tab adopts the successor instead of presenting
 * the spent token again. Without IndexedDB the answer goes to `localStorage`, which
 * reaches other tabs a little late: there a tab looks again for a short while first.
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
  readonly indexedDB?: IDBFactory;
  readonly localStorage?: Storage;
  readonly BroadcastChannel?: typeof BroadcastChannel;
  readonly crypto?: Crypto;
}

/** How long a shared answer stays readable: tabs that wake later refresh with what they adopted. */
const KEEP_MS = 120_000;
const CLAIM_WINDOW_MS = 60;
/** `localStorage` written in one tab reaches another a little later: how long a tab looks again before refreshing itself. */
const SETTLE_MS = 150;
/** How many rotations a tab follows from the token it holds to the newest pair. */
const MAX_HOPS = 8;
const WAIT_FOR_ANSWER_MS = 5_000;
const encoder = new TextEncoder();

/**
 * The coordinator of the browser this runs in; undefined outside a browser page (Node)
 * or without `crypto.subtle`, IndexedDB or `localStorage`, and either Web Locks or
 * BroadcastChannel.
 *
 * @example
 * ```ts
 * const coordinator = browserTabCoordinator(location.origin);
 * ```
 */
export function browserTabCoordinator(scope: string, env: Browserish = globalThis as Browserish): TabCoordinator | undefined {
  const subtle = env.crypto?.subtle;
  const locks = env.navigator?.locks;
  const Channel = env.BroadcastChannel;
  const name = `portcullis:refresh:${scope}`;
  const ledger = env.indexedDB !== undefined ? indexedDbLedger(env.indexedDB) : env.localStorage !== undefined ? storageLedger(env.localStorage, name) : undefined;
  if (ledger === undefined || subtle === undefined || (locks === undefined && Channel === undefined)) return undefined;
  const channel = Channel === undefined ? undefined : new Channel(name);
  const listeners = new Set<Parameters<TabCoordinator['onRotation']>[0]>();
  const claims = new Map<string, Set<string>>();
  /**
   * This tab's own claim per key: its nonce while it waits out the claim window, `''` (below
   * every nonce) while it refreshes. A claim from another tab that would outrank nobody is
   * answered with it, so a tab that starts late, or heard nothing in its window, still learns
   * that someone refreshes that token and waits for the answer instead of spending it again.
   */
  const mine = new Map<string, string>();
  const answered = new Map<string, () => void>();

  const keyOf = async (token: string) => `${name}:${hex(await subtle.digest('SHA-256', encoder.encode(token)))}`;
  const sealKey = async (token: string) =>
    subtle.importKey('raw', await subtle.digest('SHA-256', encoder.encode(`portcullis tab rotation\0${token}`)), 'AES-GCM', false, ['encrypt', 'decrypt']);

  /** Answers announced on the channel, by key (the ledger is read first). */
  const announced = new Map<string, Sealed>();
  /** The rotation that spent `token`, or undefined. */
  const readOne = async (token: string): Promise<SharedRotation | undefined> => {
    const key = await keyOf(token);
    const sealed = (await ledger.read(key).catch(() => undefined)) ?? announced.get(key);
    if (sealed === undefined || Date.now() > sealed.until) return undefined;
    try {
      const plain = await subtle.decrypt({ name: 'AES-GCM', iv: unhex(sealed.iv) }, await sealKey(token), unhex(sealed.body));
      return JSON.parse(new TextDecoder().decode(plain)) as SharedRotation;
    } catch {
      return undefined;
    }
  };
  /** The newest rotation from `token` on: each answer opens the next, sealed under its refresh token. */
  const read = async (token: string): Promise<SharedRotation | undefined> => {
    let newest: SharedRotation | undefined;
    let held = token;
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      const next = await readOne(held);
      const nextToken = (next?.tokens as { refreshToken?: unknown } | undefined)?.refreshToken;
      if (next === undefined) break;
      newest = next;
      if (typeof nextToken !== 'string') break;
      held = nextToken;
    }
    return newest;
  };

  /** Commits the answer to the ledger (awaited: the lock is released only after), then announces it. */
  const share = async (token: string, rotation: SharedRotation): Promise<void> => {
    const iv = env.crypto!.getRandomValues(new Uint8Array(12));
    const body = await subtle.encrypt({ name: 'AES-GCM', iv }, await sealKey(token), encoder.encode(JSON.stringify(rotation)));
    const key = await keyOf(token);
    const sealed: Sealed = { iv: hex(iv), body: hex(body), until: Date.now() + KEEP_MS };
    await ledger.write(key, sealed).catch(() => undefined);
    channel?.postMessage({ type: 'rotated', key, sealed });
  };

  channel?.addEventListener('message', (event: MessageEvent) => {
    const message = event.data as { type?: string; key?: string; nonce?: string };
    if (typeof message?.key !== 'string') return;
    if (message.type === 'claim' && typeof message.nonce === 'string') {
      claims.get(message.key)?.add(message.nonce);
      const own = mine.get(message.key);
      if (own !== undefined && own < message.nonce) channel!.postMessage({ type: 'claim', key: message.key, nonce: own });
    }
    if (message.type !== 'rotated') return;
    const sealed = (message as { sealed?: unknown }).sealed;
    if (isSealed(sealed)) announced.set(message.key, sealed);
    answered.get(message.key)?.();
    for (const listener of listeners) listener(async (held) => ((await keyOf(held)) === message.key ? read(held) : undefined));
  });

  const once = async (token: string, refresh: () => Promise<SharedRotation>): Promise<SharedRotation> => {
    const earlier = (await read(token)) ?? (ledger.consistent ? undefined : await settled(token));
    if (earlier !== undefined) return earlier;
    const rotation = await refresh();
    await share(token, rotation);
    return rotation;
  };

  /** Looks again for a little while: another tab's `localStorage` write may still be on its way here. */
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
    mine.set(key, nonce);
    channel!.postMessage({ type: 'claim', key, nonce });
    await new Promise((resolve) => setTimeout(resolve, CLAIM_WINDOW_MS));
    claims.delete(key);
    if ([...seen].sort()[0] === nonce) {
      answered.delete(key);
      mine.set(key, '');
      try {
        return await once(token, refresh);
      } finally {
        mine.delete(key);
      }
    }
    mine.delete(key);
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

/** A shared answer: the successor sealed under the refresh token it replaced, and when it stops being readable. */
interface Sealed {
  readonly iv: string;
  readonly body: string;
  readonly until: number;
}

function isSealed(value: unknown): value is Sealed {
  const v = value as Partial<Sealed> | null;
  return typeof v === 'object' && v !== null && typeof v.iv === 'string' && typeof v.body === 'string' && typeof v.until === 'number';
}

/** Where tabs leave answers. `consistent`: a committed write is seen by every later read of any tab. */
interface Ledger {
  readonly consistent: boolean;
  read(key: string): Promise<Sealed | undefined>;
  /** Resolves once the write is committed; drops expired answers on the way. */
  write(key: string, sealed: Sealed): Promise<void>;
}

const DB_NAME = 'portcullis-refresh';
const DB_STORE = 'rotations';

/** Answers in IndexedDB: one record per spent refresh token, swept when expired. */
function indexedDbLedger(factory: IDBFactory): Ledger {
  let db: Promise<IDBDatabase> | undefined;
  const open = (): Promise<IDBDatabase> => (db ??= new Promise<IDBDatabase>((resolve, reject) => {
    const request = factory.open(DB_NAME, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(DB_STORE);
    request.onsuccess = () => {
      // A newer version of this page upgrading the database: step aside and open again next time.
      request.result.onversionchange = () => {
        request.result.close();
        db = undefined;
      };
      resolve(request.result);
    };
    request.onerror = () => reject(request.error ?? new Error('indexedDB open failed'));
  }).catch((error: unknown) => {
    db = undefined;
    throw error;
  }));
  const run = async <T>(mode: IDBTransactionMode, work: (store: IDBObjectStore) => IDBRequest<T> | undefined): Promise<T | undefined> => {
    const tx = (await open()).transaction(DB_STORE, mode);
    const request = work(tx.objectStore(DB_STORE));
    await new Promise<void>((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error ?? new Error('indexedDB transaction failed'));
      tx.onabort = () => reject(tx.error ?? new Error('indexedDB transaction aborted'));
    });
    return request?.result;
  };
  return {
    consistent: true,
    async read(key) {
      const value: unknown = await run('readonly', (store) => store.get(key));
      return isSealed(value) ? value : undefined;
    },
    async write(key, sealed) {
      await run('readwrite', (store) => {
        const now = Date.now();
        store.openCursor().onsuccess = (event) => {
          const cursor = (event.target as IDBRequest<IDBCursorWithValue | null>).result;
          if (cursor === null) return;
          if (!isSealed(cursor.value) || now > cursor.value.until) cursor.delete();
          cursor.continue();
        };
        store.put(sealed, key);
        return undefined;
      });
    },
  };
}

/** Answers in `localStorage`, where IndexedDB is missing: writes reach other tabs a little late. */
function storageLedger(storage: Storage, name: string): Ledger {
  return {
    consistent: false,
    async read(key) {
      try {
        const value: unknown = JSON.parse(storage.getItem(key) ?? 'null');
        return isSealed(value) ? value : undefined;
      } catch {
        return undefined;
      }
    },
    async write(key, sealed) {
      for (let i = storage.length - 1; i >= 0; i--) {
        const stored = storage.key(i);
        if (stored === null || !stored.startsWith(`${name}:`)) continue;
        const value = await this.read(stored);
        if (value === undefined || Date.now() > value.until) storage.removeItem(stored);
      }
      storage.setItem(key, JSON.stringify(sealed));
    },
  };
}

function hex(bytes: ArrayBuffer | Uint8Array): string {
  return Array.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}

function unhex(text: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}
