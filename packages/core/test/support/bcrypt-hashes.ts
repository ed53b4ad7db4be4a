/**
 * Stored hashes the password tests feed to `verify`: every way a stored value can
 * fail to be a bcrypt hash the binding really computes.
 */
import bcrypt from 'bcrypt';

/** A real bcrypt hash of another password at `cost`. */
export const realHashAtCost = (cost: number): Promise<string> => bcrypt.hash('someone else', cost);

/** The cost a bcrypt hash names. */
export const costOf = (hash: string): number => Number(hash.slice(4, 6));

/** Malformed stored hashes, by name; a function builds one from a real hash. */
export const MALFORMED_HASHES: Array<[string, string | (() => Promise<string>)]> = [
  ['empty string', ''],
  ['one character', 'x'],
  ['truncated hash', '$2b$04$short'],
  ['cost 99', async () => (await realHashAtCost(4)).replace('$04$', '$99$')],
  ['cost 03', async () => (await realHashAtCost(4)).replace('$04$', '$03$')],
  ['cost 32', async () => (await realHashAtCost(4)).replace('$04$', '$32$')],
  ['non-numeric cost', async () => (await realHashAtCost(4)).replace('$04$', '$xx$')],
  ['unknown minor version $2x$', async () => (await realHashAtCost(4)).replace('$2b$', '$2x$')],
  ['one character short', async () => (await realHashAtCost(4)).slice(0, -1)],
  ['a character outside the bcrypt alphabet', async () => `${(await realHashAtCost(4)).slice(0, -1)}!`],
];

/** The hash of a {@link MALFORMED_HASHES} row. */
export async function resolveHash(value: string | (() => Promise<string>)): Promise<string> {
  return typeof value === 'string' ? value : value();
}
