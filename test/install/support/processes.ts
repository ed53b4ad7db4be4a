/**
 * Child processes for the consumer test, with failures that explain themselves:
 * a command that fails throws its command line, directory, exit code and output.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** What a finished command printed. */
export interface CommandResult {
  readonly code: number | null;
  /** True when it was killed for running past its time limit. */
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

const tail = (text: string, lines = 40) => text.trimEnd().split('\n').slice(-lines).join('\n');

/** Runs a command to its end and answers its output, whatever its exit code. */
export function runCommand(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 180_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, timedOut, stdout, stderr });
    });
  });
}

/** Runs a command that must succeed; otherwise throws what it printed. */
export async function mustRun(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CommandResult> {
  const result = await runCommand(command, args, options);
  if (result.code !== 0) {
    throw new Error(`\`${[command, ...args].join(' ')}\` in ${options.cwd} ${result.timedOut ? `was killed after ${options.timeoutMs ?? 180_000} ms` : `exited with ${result.code}`}\n--- stdout\n${tail(result.stdout)}\n--- stderr\n${tail(result.stderr)}`);
  }
  return result;
}

/** A started server: its first HTTP base URL line, and how to stop it. */
export interface RunningServer {
  readonly url: string;
  readonly output: () => string;
  stop(): Promise<void>;
}

/**
 * Starts a server and waits until it prints `http://host:port` (answered as `url`).
 * Throws, with everything it printed, when it exits or stays silent for `timeoutMs`.
 */
export function startServer(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<RunningServer> {
  const child: ChildProcess = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 3000).unref();
    });
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      void stop();
      reject(new Error(`\`${[command, ...args].join(' ')}\` in ${options.cwd} ${why}\n--- output\n${tail(output)}`));
    };
    const timer = setTimeout(() => fail(`printed no http:// address within ${options.timeoutMs ?? 60_000} ms`), options.timeoutMs ?? 60_000);
    const onData = (chunk: string) => {
      output += chunk;
      const match = /(http:\/\/[\w.[\]:-]+:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1]!, output: () => output, stop });
      }
    };
    child.stdout!.setEncoding('utf8').on('data', onData);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      fail(`exited (${signal ?? code}) before listening`);
    });
  });
}
