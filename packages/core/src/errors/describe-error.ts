/**
 * What a log line may say about a thrown value.
 */

/**
 * The log fields of a thrown value: `error` is its class name (or its `typeof`
 * when it is not an object), `code` its string code when it has one (a
 * `PortcullisError` code, `ECONNRESET`, …).
 *
 * @example
 * ```ts
 * const fields: ErrorLogFields = describeError(new PortcullisError('unavailable', 'redis down')); // { error: 'PortcullisError', code: 'unavailable' }
 * ```
 */
export type ErrorLogFields = { readonly error: string; readonly code?: string };

/** Names and codes are identifiers; anything else in those fields could be data and is left out. */
const IDENTIFIER = /^[A-Za-z_$][\w$.:-]{0,63}$/;

/**
 * The one way portcullis describes an error in a log line: its class name and its
 * code, never its message (messages may quote a request, a token or a password)
 * and never its stack.
 *
 * @example
 * ```ts
 * socket.on('error', (error) => log.debug('socket error; the connection closes', { clientId, ...describeError(error) }));
 * // { clientId: 'tcp-…', error: 'Error', code: 'ECONNRESET' }
 * ```
 */
export function describeError(error: unknown): ErrorLogFields {
  if (typeof error !== 'object' || error === null) return { error: typeof error };
  const { name, code } = error as { name?: unknown; code?: unknown };
  const className = identifier(name) ?? identifier((error as { constructor?: { name?: unknown } }).constructor?.name) ?? 'object';
  const safeCode = identifier(code);
  return safeCode === undefined ? { error: className } : { error: className, code: safeCode };
}

function identifier(value: unknown): string | undefined {
  return typeof value === 'string' && IDENTIFIER.test(value) ? value : undefined;
}
