/**
 * The unit a per-address limit counts: one IPv4 address, or one IPv6 /64 (what a single
 * host or subscriber is usually given, so an attacker cannot step through 2^64 addresses).
 */
import { isIPv4, isIPv6 } from 'node:net';

function expandIpv6(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(Math.max(0, missing)).fill('0'), ...right];
}

/**
 * The bucket of a client address: an IPv4 address as it is (also when written as an
 * IPv4-mapped IPv6 address), the first 64 bits of an IPv6 address, anything else
 * trimmed and lower-cased.
 *
 * @example
 * ```ts
 * addressBucket('::ffff:10.0.0.7');          // '10.0.0.7'
 * addressBucket('2001:db8:1:2:aaaa::1');     // '2001:db8:1:2::/64'
 * ```
 */
export function addressBucket(address: string): string {
  const text = address.trim().toLowerCase().replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (mapped && isIPv4(mapped[1]!)) return mapped[1]!;
  if (isIPv4(text) || !isIPv6(text) || text.includes('.')) return text;
  const groups = expandIpv6(text).slice(0, 4).map((group) => group.replace(/^0+(?=.)/, ''));
  return `${groups.join(':')}::/64`;
}
