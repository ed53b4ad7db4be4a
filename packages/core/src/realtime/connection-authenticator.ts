import { credentialKind, WIRE_ERROR_MESSAGES } from '@portcullis/protocol';
import { inject, injectable } from 'tsyringe';
import type { Principal } from '../contracts/principal.js';
import { LOGGER_FACTORY } from '../di/tokens.js';
import { describeError } from '../errors/describe-error.js';
import { consoleLoggerFactory, type Logger, type LoggerFactory } from '../logging/logger.js';
import { JwtAuth } from '../shield/jwt-auth.js';
import { SessionAuth } from '../shield/session-auth.js';
import type { ConnectionContext } from './connection-context.js';

/**
 * How a connection may authenticate: which credential, for whom.
 *
 * @example
 * ```ts
 * const auth: ConnectionAuthResult = await dispatcher.authenticateConnection(token);
 * if (auth.ok && auth.kind === 'session') registry.attach(clientId, { token, auth });
 * ```
 */
export type ConnectionAuthResult =
  | { readonly ok: true; readonly kind: 'anonymous'; readonly principal: undefined }
  | { readonly ok: true; readonly kind: 'session'; readonly principal: Principal }
  | { readonly ok: true; readonly kind: 'jwt'; readonly principal: Principal; readonly jti: string; readonly fam?: string }
  | { readonly ok: false; readonly code: 'unauthorized' | 'unavailable'; readonly message: string };

const ANONYMOUS: ConnectionAuthResult = Object.freeze({ ok: true, kind: 'anonymous', principal: undefined });
const UNRECOGNISED: ConnectionAuthResult = Object.freeze({
  ok: false,
  code: 'unauthorized',
  message: 'the credential is neither a session token nor a JWT access token',
});

/**
 * Decides whether a connection's credential (WebSocket `Authorization` header,
 * auth frame, TCP handshake) is valid, so transports never parse tokens: a
 * session token is checked like `SessionAuth`, a JWT like `JwtAuth`; `null` or
 * `undefined` is an anonymous connection (open gates only).
 *
 * @example
 * ```ts
 * const auth = await authenticator.authenticate(bearerToken, { transport: 'ws', clientId, remoteAddress, memo });
 * if (!auth.ok) return refuseUpgrade(401);
 * ```
 */
@injectable()
export class ConnectionAuthenticator {
  private readonly log: Logger;

  constructor(
    private readonly jwtAuth: JwtAuth,
    private readonly sessionAuth: SessionAuth,
    @inject(LOGGER_FACTORY) loggers: LoggerFactory = consoleLoggerFactory,
  ) {
    this.log = loggers.create('portcullis:realtime');
  }

  /** Never throws; a store outage answers `unavailable`. */
  async authenticate(token: unknown, conn: Partial<Omit<ConnectionContext, 'credential'>> = {}): Promise<ConnectionAuthResult> {
    if (token === null || token === undefined) return ANONYMOUS;
    const kind = credentialKind(token);
    if (kind === undefined) return UNRECOGNISED;
    const credential = token as string;
    try {
      if (kind === 'jwt') {
        const verified = await this.jwtAuth.verify(credential, conn.memo);
        if (!verified.ok) return refusal(verified.code, verified.message);
        const { jti, fam } = verified.claims;
        return typeof fam === 'string' ? { ok: true, kind, principal: verified.result.principal, jti, fam } : { ok: true, kind, principal: verified.result.principal, jti };
      }
      const result = await this.sessionAuth.authenticate({
        transport: conn.transport ?? 'ws',
        credential,
        clientId: conn.clientId ?? '',
        remoteAddress: conn.remoteAddress,
        memo: conn.memo,
      });
      if (!result.ok) return refusal(result.code, result.message);
      return { ok: true, kind, principal: result.principal };
    } catch (error) {
      this.log.error('connection authentication failed; refusing with unavailable', describeError(error));
      return refusal('unavailable', undefined);
    }
  }
}

function refusal(code: 'unauthorized' | 'forbidden' | 'unavailable', message: string | undefined): ConnectionAuthResult {
  const wireCode = code === 'unavailable' ? 'unavailable' : 'unauthorized';
  return { ok: false, code: wireCode, message: message ?? WIRE_ERROR_MESSAGES[wireCode] };
}
