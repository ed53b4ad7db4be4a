/**
 * Seeded fuzz inputs for the fault tests: a tiny PRNG (mulberry32) and a generator
 * of hostile messages — random bytes, random text, JSON-shaped noise built from
 * the protocol's own words, valid requests cut short or with a byte flipped, and
 * deep nesting. The same seed always yields the same inputs, so a failure replays.
 */

/** mulberry32: a 32-bit seeded PRNG; returns floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One fuzz input: its bytes, and its text when the bytes are valid UTF-8. */
export interface FuzzInput {
  readonly bytes: Buffer;
  readonly text: string | undefined;
  readonly kind: string;
}

const WORDS = [
  '{', '}', '[', ']', ',', ':', '"id"', '"portal"', '"gate"', '"data"', '"token"', '"type"', '"auth"', '"/game"', '"move"',
  '"ping"', '"whoami"', '"echo"', '"boom"', '"limited"', '"rate_limited"', '"retryAfterMs"', '"x"', '"y"', 'null', 'true', 'false', '0', '-1', '1e309', '1.5', '9007199254740993',
  '"__proto__"', '"constructor"', '"prototype"', '"toString"', '"valueOf"', '"then"', '""', '"\\u0000"', '"\\ud800"', '"é"',
  '"a;session"', '"00000000-0000-4000-8000-000000000000;session"', '"eyJhbGciOiJub25lIn0.e30."', ' ', '\n', '"\\"',
];

const utf8 = new TextDecoder('utf-8', { fatal: true });

function textOf(bytes: Buffer): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Valid requests and auth frames, to be truncated or corrupted. */
export function validMessages(token = '00000000-0000-4000-8000-000000000000;session'): string[] {
  return [
    JSON.stringify({ id: 1, portal: '/game', gate: 'ping' }),
    JSON.stringify({ id: 2, portal: '/game', gate: 'move', data: { x: 1, y: 2 } }),
    JSON.stringify({ id: 3, portal: '/game', gate: 'whoami', data: null, token }),
    JSON.stringify({ id: 4, portal: '/game', gate: 'echo', data: { nested: [1, 'two', { three: 3 }] } }),
    JSON.stringify({ id: 5, portal: '/game', gate: 'limited', data: { retryAfterMs: -1 } }),
    JSON.stringify({ type: 'auth', token }),
    JSON.stringify({ type: 'auth', token: null }),
  ];
}

/**
 * `count` hostile inputs from `seed`, in a fixed order.
 *
 * @example
 * ```ts
 * for (const input of fuzzInputs(7, 10_000)) decoder.push(input.bytes);
 * ```
 */
export function fuzzInputs(seed: number, count: number): FuzzInput[] {
  const random = seededRandom(seed);
  const int = (n: number) => Math.floor(random() * n);
  const valid = validMessages();
  const out: FuzzInput[] = [];
  for (let i = 0; i < count; i++) {
    let kind: string;
    let bytes: Buffer;
    switch (int(6)) {
      case 0:
        kind = 'random-bytes';
        bytes = Buffer.from(Array.from({ length: int(300) }, () => int(256)));
        break;
      case 1:
        kind = 'random-ascii';
        bytes = Buffer.from(Array.from({ length: int(200) }, () => 32 + int(95)));
        break;
      case 2:
        kind = 'json-noise';
        bytes = Buffer.from(Array.from({ length: 1 + int(40) }, () => WORDS[int(WORDS.length)]).join(''));
        break;
      case 3: {
        kind = 'truncated';
        const message = Buffer.from(valid[int(valid.length)]!);
        bytes = message.subarray(0, int(message.length));
        break;
      }
      case 4: {
        kind = 'corrupted';
        bytes = Buffer.from(valid[int(valid.length)]!);
        bytes[int(bytes.length)] = int(256);
        break;
      }
      default: {
        kind = 'nested';
        const depth = 1 + int(5000);
        const [open, close] = random() < 0.5 ? ['[', ']'] : ['{"data":', '}'];
        const closing = random() < 0.5 ? close.repeat(depth) + '}' : '';
        bytes = Buffer.from(`{"id":${i},"portal":"/game","gate":"echo","data":${open.repeat(depth)}1${closing}`);
        break;
      }
    }
    out.push({ bytes, text: textOf(bytes), kind });
  }
  return out;
}
