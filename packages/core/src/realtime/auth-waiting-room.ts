/**
 * The per-address count of connections waiting to authenticate, shared by the
 * connection-oriented transports: one client address cannot hold more than a set
 * number of sockets open without a credential.
 */

/**
 * A place in the waiting room; `leave` frees it and may be called any number of times.
 *
 * @example
 * ```ts
 * const ticket = room.enter(socket.remoteAddress);
 * socket.once('close', () => ticket?.leave());
 * ```
 */
export interface AuthTicket {
  leave(): void;
}

/**
 * Counts connections per client address from the moment they are accepted until
 * they authenticate (or open anonymously), close or time out.
 *
 * @example
 * ```ts
 * const room = new AuthWaitingRoom(64);
 * const ticket = room.enter('203.0.113.7');
 * if (ticket === undefined) return socket.destroy(); // 64 already waiting from there
 * ```
 */
export class AuthWaitingRoom {
  private readonly waiting = new Map<string, number>();

  constructor(readonly maxPerAddress: number) {}

  /** How many connections from `address` are waiting. */
  count(address: string | undefined): number {
    return this.waiting.get(address ?? '') ?? 0;
  }

  /** A ticket, or undefined when `maxPerAddress` connections from `address` already wait. */
  enter(address: string | undefined): AuthTicket | undefined {
    const key = address ?? '';
    const count = this.waiting.get(key) ?? 0;
    if (count >= this.maxPerAddress) return undefined;
    this.waiting.set(key, count + 1);
    let left = false;
    return {
      leave: () => {
        if (left) return;
        left = true;
        const now = (this.waiting.get(key) ?? 1) - 1;
        if (now <= 0) this.waiting.delete(key);
        else this.waiting.set(key, now);
      },
    };
  }
}
