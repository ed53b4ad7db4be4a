/**
 * The child side of the benches' and load tests' server processes: the parent sends
 * `{seq, cmd, args}` over IPC and gets `{seq, ok: true, value}` or `{seq, ok: false, error}`.
 */

/**
 * Answers the parent's commands with `handlers[cmd](args)`, then tells it the server is
 * ready, with `readyFields` (its ports) in the message.
 *
 * @example
 * serveParent({ ping: () => 'pong' }, { port: 3000 });
 */
export function serveParent(handlers, readyFields) {
  process.on('message', async ({ seq, cmd, args }) => {
    try {
      process.send({ seq, ok: true, value: await handlers[cmd](args ?? {}) });
    } catch (error) {
      process.send({ seq, ok: false, error: String(error?.stack ?? error) });
    }
  });
  process.send({ ready: true, ...readyFields });
}
