/**
 * Runs documented commands as a user would: real Node processes, real ports.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** A started process and what it has printed so far (stdout and stderr, in arrival order). */
export interface RunningProcess {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves with the first match of `pattern` in the output; rejects on exit or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends SIGTERM (then SIGKILL after 2 s) and resolves once the process is gone. */
  stop(): Promise<void>;
}

/**
 * Starts `node <args>` in `cwd` with `env` added to this process's environment.
 *
 * @example
 * ```ts
 * const server = startNode(['docs/examples/dist/first-portal.js'], { cwd: root, env: { PORT: '0' } });
 * const [, url] = await server.waitFor(/listening on (\S+)/);
 * ```
 */
export function startNode(args: readonly string[], options: { cwd: string; env?: Record<string, string> }): RunningProcess {
  const child = spawn(process.execPath, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (const listener of [...listeners]) listener();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => text,
    waitFor(pattern, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = text.match(pattern);
          if (match) finish(() => resolve(match));
        };
        const finish = (settle: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          settle();
        };
        const timer = setTimeout(() => finish(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${text}`))), timeoutMs);
        listeners.add(check);
        void exited.then(() => finish(() => reject(new Error(`process exited (${child.exitCode}) before printing ${pattern}; output:\n${text}`))));
        check();
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/**
 * Runs `node <args>` to completion and answers its exit code and output.
 *
 * @example
 * ```ts
 * const { code, stdout } = await runNode(['docs/examples/try-first-portal.mjs'], { cwd: root });
 * ```
 */
export function runNode(args: readonly string[], options: { cwd: string; env?: Record<string, string>; timeoutMs?: number }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node ${args.join(' ')} did not finish within ${options.timeoutMs ?? 20_000} ms; output:\n${stdout}${stderr}`));
    }, options.timeoutMs ?? 20_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
