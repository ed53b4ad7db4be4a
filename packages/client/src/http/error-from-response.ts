import type { ErrorCode } from '@portcullis/protocol';
import { isServerErrorCode, PortcullisClientError } from '../errors/portcullis-client-error.js';

/** The client's one table: the code of an HTTP error answer whose body names none. */
const CODE_BY_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  429: 'locked_out',
  503: 'unavailable',
};

function retryAfter(response: Response): number | undefined {
  const header = response.headers.get('retry-after');
  const seconds = header === null ? Number.NaN : Number(header);
  return Number.isFinite(seconds) ? seconds : undefined;
}

/**
 * Turns a failed HTTP answer into a {@link PortcullisClientError}: the body's
 * `error` code when it has one, otherwise a code from the status (an empty 401
 * is a bearer challenge: `unauthorized`).
 *
 * @example
 * ```ts
 * if (!res.ok) throw await errorFromResponse(res);
 * ```
 */
export async function errorFromResponse(response: Response): Promise<PortcullisClientError> {
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  const wire = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const code = isServerErrorCode(wire['error'])
    ? wire['error']
    : (CODE_BY_STATUS[response.status] ?? (response.status >= 500 ? 'internal' : 'unexpected_response'));
  const message = typeof wire['message'] === 'string' ? wire['message'] : `HTTP ${response.status}`;
  return new PortcullisClientError(code, message, { status: response.status, retryAfterSeconds: retryAfter(response) });
}
