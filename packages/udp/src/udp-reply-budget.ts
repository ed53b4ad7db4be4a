import { encodeReply, type GateReply } from '@portcullis/protocol';

/**
 * Fits a reply, already encoded as `text`, into the anti-amplification budget of an
 * unauthenticated sender: the text as is when it fits, an error reply without its
 * message text when that fits, otherwise `undefined` (send nothing).
 *
 * @example
 * ```ts
 * const text = fitReply(reply, encodeReply(reply), request.length * 1); // undefined: do not answer
 * ```
 */
export function fitReply(reply: GateReply, text: string, budgetBytes: number): string | undefined {
  if (Buffer.byteLength(text) <= budgetBytes) return text;
  if (reply.ok) return undefined;
  const terse = encodeReply({ id: reply.id, ok: false, error: { code: reply.error.code, message: '' } });
  return Buffer.byteLength(terse) <= budgetBytes ? terse : undefined;
}
