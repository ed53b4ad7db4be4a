/**
 * A busy event loop on demand, for tests of what a server does when it falls behind: a long
 * GC pause, a saturated CPU, loop turns that each run long.
 */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/** Blocks this process's event loop for `ms` milliseconds. */
export function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy on purpose
  }
}

/**
 * Makes every loop turn of this process run `ms` longer, from the next check phase on, as a
 * saturated server's turns do; answers the function that stops it.
 *
 * @example
 * ```ts
 * const idle = busyTurns(200);
 * await Promise.allSettled(reads);
 * idle();
 * ```
 */
export function busyTurns(ms: number): () => void {
  let busy = true;
  const turn = (): void => {
    if (!busy) return;
    stall(ms);
    setImmediate(turn);
  };
  setImmediate(turn);
  return () => {
    busy = false;
  };
}

/**
 * Runs `turns` loop turns back to back whose poll phases each read `readsEach` sockets,
 * each read busy for `msEach`, as a saturated server's turns read thousands of sockets.
 * `onRead(turn, read)` runs in each read (both from 0). The sockets of a turn are written
 * in the last read of the turn before, so they are ready when its poll phase begins.
 * Resolves once every read ran.
 *
 * @example
 * ```ts
 * await longPollPhases(2, 12, 5, (turn, read) => { if (turn === 0 && read === 0) asked = checks.validate(token); });
 * ```
 */
export async function longPollPhases(turns: number, readsEach: number, msEach: number, onRead: (turn: number, read: number) => void): Promise<void> {
  const server = createServer();
  const clients: Socket[][] = Array.from({ length: turns }, () => []);
  const accepted: Socket[] = [];
  let done!: (error?: unknown) => void;
  const allRead = new Promise<void>((resolve, reject) => (done = (error) => (error === undefined ? resolve() : reject(error))));
  let read = 0;
  server.on('connection', (socket) => {
    accepted.push(socket);
    socket.once('data', () => {
      const turn = Math.floor(read / readsEach);
      const index = read % readsEach;
      stall(msEach);
      try {
        onRead(turn, index);
      } catch (error) {
        done(error);
      }
      read++;
      if (index === readsEach - 1) {
        if (turn === turns - 1) done();
        else for (const client of clients[turn + 1]!) client.write('x');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  for (const group of clients) {
    for (let i = 0; i < readsEach; i++) {
      const client = connect(port, '127.0.0.1');
      await new Promise<void>((resolve) => client.once('connect', resolve));
      group.push(client);
    }
  }
  while (accepted.length < turns * readsEach) await new Promise((resolve) => setImmediate(resolve));
  for (const client of clients[0]!) client.write('x');
  try {
    await allRead;
  } finally {
    for (const socket of [...clients.flat(), ...accepted]) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
