/**
 * The UDP keys of sessions: a session's `sid` and `udpKey`, derived from the
 * signing keys, so any server of the fleet can rebuild a key from a `sid` while
 * the cache holds nothing that gives it; and the MAC of an authenticated datagram.
 */
import { createHash, createHmac, KeyObject } from 'node:crypto';
import { UDP_SID_BYTES, UdpMacKey } from '@portcullis/protocol';
import type { SigningKey } from '../contracts/signing-key.js';
import { PortcullisError } from '../errors/portcullis-error.js';
import { HmacSha256 } from './hmac-sha256.js';

/** What a signing key is turned into before it derives UDP keys (a key is used for one purpose only). */
const SECRET_LABEL = 'portcullis:udp-secret';
const UDP_LABEL = Buffer.from('udp:', 'utf8');

/**
 * A session's `sid`: the first 16 bytes of SHA-256 of its access token (UTF-8).
 *
 * @example
 * ```ts
 * udpSessionId(session.accessToken).toString('hex'); // 32 hex digits
 * ```
 */
export function udpSessionId(accessToken: string): Buffer {
  return createHash('sha256').update(accessToken, 'utf8').digest().subarray(0, UDP_SID_BYTES);
}

/**
 * {@link udpSessionId} from the session's store key (`sessionKey` of the access token: the
 * same SHA-256, base64url), for code that holds the key and not the token.
 *
 * @example
 * ```ts
 * udpSessionIdOfKey(sessionKey(accessToken)).equals(udpSessionId(accessToken)); // true
 * ```
 */
export function udpSessionIdOfKey(accessKey: string): Buffer {
  return Buffer.from(accessKey, 'base64url').subarray(0, UDP_SID_BYTES);
}

/**
 * The MAC of an authenticated datagram: the first 16 bytes of HMAC-SHA256(udpKey, signed).
 * For many datagrams of one key, keep a `UdpMacKey` (what the transport does): this
 * prepares the key on every call.
 *
 * @example
 * ```ts
 * datagram.set(udpMac(key, datagram.subarray(0, datagram.length - 16)), datagram.length - 16);
 * ```
 */
export function udpMac(udpKey: KeyObject | Uint8Array, signed: Uint8Array): Buffer {
  return Buffer.from(new UdpMacKey(keyBytes(udpKey)).mac(signed));
}

/**
 * True when `mac` is the MAC of `signed` under `udpKey`; compared in constant time.
 *
 * @example
 * ```ts
 * if (!udpMacMatches(key, parts.signed, parts.mac)) return; // drop
 * ```
 */
export function udpMacMatches(udpKey: KeyObject | Uint8Array, signed: Uint8Array, mac: Uint8Array): boolean {
  return new UdpMacKey(keyBytes(udpKey)).matches(signed, mac);
}

function keyBytes(key: KeyObject | Uint8Array): Uint8Array {
  return key instanceof KeyObject ? key.export() : key;
}

/**
 * Derives every session's UDP key: `udpKey = HMAC-SHA256(secret, "udp:" ‖ sid)`,
 * where `secret = HMAC-SHA256(signing key bytes, "portcullis:udp-secret")`. New keys
 * come from the active signing key; a datagram is also checked against the keys of
 * the previous signing keys, so a key rotation leaves the UDP keys of older
 * sessions working while their signing key still verifies.
 *
 * @example
 * ```ts
 * const keyring = container.resolve(UdpKeyring);
 * const udpKey = keyring.udpKeyOf(session.accessToken); // base64url, for the upgrade answer
 * ```
 */
export class UdpKeyring {
  readonly #secrets: readonly HmacSha256[];

  /**
   * @param active - bytes (or secret `KeyObject`) of the signing key that makes new UDP keys.
   * @param previous - keys that no longer sign but whose sessions' UDP keys still verify.
   */
  constructor(active: KeyObject | Uint8Array | undefined, previous: readonly (KeyObject | Uint8Array)[] = []) {
    this.#secrets = (active === undefined ? [] : [active, ...previous]).map((key) => new HmacSha256(createHmac('sha256', key).update(SECRET_LABEL, 'utf8').digest()));
  }

  /**
   * The keyring of a server's signing keys. HS256: the active key makes UDP keys and every
   * previous key still verifies them. EdDSA: the private key's PKCS#8 bytes make them (a
   * public key holds no secret, so a rotation gives older sessions new UDP keys at their
   * next refresh). A verify-only server holds no secret: its keyring makes no key and
   * verifies none.
   *
   * @example
   * ```ts
   * const keyring = UdpKeyring.of(container.resolve(SIGNING_KEY));
   * ```
   */
  static of(key: SigningKey): UdpKeyring {
    const signing = key.signingKeyObject;
    if (signing === undefined) return new UdpKeyring(undefined);
    if (key.algorithm === 'EdDSA') return new UdpKeyring(signing.export({ format: 'der', type: 'pkcs8' }));
    return new UdpKeyring(signing, [...key.verificationKeys.values()].filter((verifying) => !verifying.equals(signing)));
  }

  /** True when this server can make and check UDP keys (it holds a signing secret). */
  get canDerive(): boolean {
    return this.#secrets.length > 0;
  }

  /**
   * The `udpKey` of a session, base64url: what the upgrade and every session
   * refresh answer carry. The in-band refresh answers it too, from this function.
   *
   * @example
   * ```ts
   * res.json({ ...upgradeResponse(result), udpKey: keyring.udpKeyOf(result.accessToken) });
   * ```
   */
  udpKeyOf(accessToken: string): string {
    return this.keyFor(udpSessionId(accessToken)).toString('base64url');
  }

  /**
   * The 32-byte UDP key of a `sid`, made with the active signing key.
   *
   * @throws PortcullisError `key_rejected` on a verify-only server (see {@link canDerive}).
   */
  keyFor(sid: Uint8Array): Buffer {
    const secret = this.#secrets[0];
    if (secret === undefined) throw new PortcullisError('key_rejected', 'this server holds no signing secret to derive UDP keys from (verify-only)');
    return derive(secret, sid);
  }

  /** The UDP keys a datagram of this `sid` may carry: the active signing key's first, then each previous key's. */
  keysFor(sid: Uint8Array): Buffer[] {
    return this.#secrets.map((secret) => derive(secret, sid));
  }
}

function derive(secret: HmacSha256, sid: Uint8Array): Buffer {
  return secret.digest(Buffer.concat([UDP_LABEL, sid]));
}
