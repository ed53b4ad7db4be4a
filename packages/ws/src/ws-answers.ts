/**
 * The one table of the WebSocket transport: how each reason to refuse or close a
 * connection is answered, before the upgrade (HTTP status) and after it (close code).
 */
import { WS_CLOSE, type CloseReason } from '@portcullis/protocol';
import type { UpgradeStatus } from './upgrade-refusal.js';

/**
 * How the WebSocket transport answers one reason.
 *
 * @example
 * ```ts
 * const { status, close }: WebSocketAnswer = WS_ANSWERS.unavailable; // 503 before the upgrade, 1013 after
 * ```
 */
export interface WebSocketAnswer {
  /** The HTTP status of a refused upgrade. */
  readonly status: UpgradeStatus;
  /** The close code of an open connection. */
  readonly close: number;
}

/**
 * Every close reason of the protocol and its WebSocket answer.
 *
 * @example
 * ```ts
 * ws.close(WS_ANSWERS[reason].close, detail);
 * ```
 */
export const WS_ANSWERS: Readonly<Record<CloseReason, WebSocketAnswer>> = Object.freeze({
  unauthorized: { status: 401, close: WS_CLOSE.unauthorized },
  unavailable: { status: 503, close: WS_CLOSE.unavailable },
  bad_request: { status: 400, close: WS_CLOSE.policy },
});
