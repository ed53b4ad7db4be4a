import { describe, expect, it } from 'vitest';
import type { Logger } from '../contracts/logger.js';
import { ThrottledLog } from './throttled-log.js';

function recorder(): { logger: Logger; lines: Array<{ level: string; message: string; fields?: Record<string, unknown> }> } {
  const lines: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push({ level, message, fields });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

describe('ThrottledLog', () => {
  it('writes the first occurrence at once, then at most one line per interval with the count since the last', async () => {
    const { logger, lines } = recorder();
    const line = new ThrottledLog(logger, 'error', 'store failed', 50);
    for (let i = 0; i < 1000; i++) line.note({ code: 'unavailable' });
    expect(lines).toEqual([{ level: 'error', message: 'store failed', fields: { code: 'unavailable', times: 1 } }]);
    await new Promise((resolve) => setTimeout(resolve, 60));
    line.note(() => ({ code: 'unavailable' }));
    expect(lines).toHaveLength(2);
    expect(lines[1]!.fields).toEqual({ code: 'unavailable', times: 1000 });
  });
});
