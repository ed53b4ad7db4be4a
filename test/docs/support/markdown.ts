/**
 * Reads fenced code blocks out of a Markdown page, so tests can hold a page to the code it shows.
 */
import { readFileSync } from 'node:fs';

/** One fenced block: its info string (`ts`, `sh`, `text`, …) and its text without the fences. */
export interface FencedBlock {
  readonly lang: string;
  readonly text: string;
}

/**
 * Every fenced block of the Markdown file at `path`, in page order.
 *
 * @example
 * ```ts
 * const commands = fencedBlocks('docs/getting-started.md').filter((b) => b.lang === 'sh');
 * ```
 */
export function fencedBlocks(path: string | URL): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const pattern = /^```([\w+-]*)\n([\s\S]*?)^```$/gm;
  for (const match of readFileSync(path, 'utf8').matchAll(pattern)) blocks.push({ lang: match[1] ?? '', text: match[2] ?? '' });
  return blocks;
}

/**
 * Output lines with what differs per run replaced: uuids, ISO times, port numbers of
 * 127.0.0.1, and the digits of per-process names (`ada1234` → `ada<n>`).
 *
 * @example
 * ```ts
 * expect(normaliseOutput(result.stdout)).toEqual(normaliseOutput(shownBlock));
 * ```
 */
export function normaliseOutput(text: string): string[] {
  return text
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '<uuid>')
    .replace(/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\b/g, '<time>')
    .replace(/(127\.0\.0\.1):\d+/g, '$1:<port>')
    .replace(/\b(ada|pixel)\d+\b/g, '$1<n>')
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line !== '');
}
