/**
 * docs/getting-started.md, followed as written: the page shows the example files
 * verbatim, and the commands it gives produce the output it shows, against a real
 * server process and a real client process.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencedBlocks, normaliseOutput } from './support/markdown.js';
import { runNode, startNode, type RunningProcess } from './support/processes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const page = `${root}docs/getting-started.md`;
const blocks = fencedBlocks(page);
const shown = (lang: string) => blocks.filter((b) => b.lang === lang).map((b) => b.text);
const commands = shown('sh').flatMap((text) => text.split('\n')).filter((line) => line.trim() !== '');
const outputs = shown('text');

function shownOutputContaining(marker: string): string[] {
  const output = outputs.find((text) => text.includes(marker));
  if (output === undefined) throw new Error(`getting-started.md shows no output block containing ${JSON.stringify(marker)}`);
  return normaliseOutput(output);
}

/** The page's command line that runs `script` (with `node`), as the test will run it. */
function documentedNodeArgs(script: string): string[] {
  const line = commands.find((command) => command.includes(`node ${script}`));
  if (line === undefined) throw new Error(`getting-started.md gives no command running ${script}`);
  return line.slice(line.indexOf(`node ${script}`) + 'node '.length).split(/\s+/);
}

beforeAll(() => {
  // The page's programs run from dist/, built by `npm start`, `npm run build` and `npm test` (tsc -b).
  // Building here would race other work on the tree, so a missing or stale build is reported instead.
  const stale = [
    ['docs/examples/first-portal.ts', 'docs/examples/dist/first-portal.js'],
    ...readdirSync(`${root}examples/game-server/src`).filter((f) => f.endsWith('.ts')).map((f) => [`examples/game-server/src/${f}`, `examples/game-server/dist/${f.replace(/\.ts$/, '.js')}`]),
  ].filter(([source, built]) => !existsSync(`${root}${built}`) || statSync(`${root}${built}`).mtimeMs < statSync(`${root}${source}`).mtimeMs);
  if (stale.length > 0) throw new Error(`not built or out of date: ${stale.map(([, built]) => built).join(', ')}; run \`npx tsc -b\` (npm test does)`);
});

describe('docs/getting-started.md shows the files it runs, verbatim', () => {
  it('shows docs/examples/first-portal.ts and docs/examples/try-first-portal.mjs whole', () => {
    expect(shown('ts')).toContain(readFileSync(`${root}docs/examples/first-portal.ts`, 'utf8'));
    expect(shown('js')).toContain(readFileSync(`${root}docs/examples/try-first-portal.mjs`, 'utf8'));
  });

  it('starts with the two commands of the README', () => {
    expect(commands.slice(0, 2)).toEqual(['npm install && npm start', 'npm install && npm test']);
    expect(readFileSync(`${root}package.json`, 'utf8')).toContain('"start": "tsc -b && node --max-semi-space-size=64 examples/game-server/dist/main.js"');
    expect(commands).toContain('npm run build && node docs/examples/dist/first-portal.js');
    expect(commands).toContain('node docs/examples/try-first-portal.mjs');
  });
});

describe('step 1: npm start prints where it listens', () => {
  let server: RunningProcess;
  afterAll(() => server?.stop());

  it('prints the addresses the page shows', async () => {
    server = startNode(['examples/game-server/dist/main.js'], { cwd: root, env: { PORT: '0', TCP_PORT: '0', UDP_PORT: '0', SVC__SECURITY__KEY: '' } });
    await server.waitFor(/UDP\s+127\.0\.0\.1:\d+/);
    expect(normaliseOutput(server.output())).toEqual(shownOutputContaining('portcullis example game server'));
  });
});

describe('steps 3 and 4: the first shielded portal, tried from Node', () => {
  let server: RunningProcess;
  let url: string;

  beforeAll(async () => {
    server = startNode(documentedNodeArgs('docs/examples/dist/first-portal.js'), { cwd: root, env: { PORT: '0', SVC__SECURITY__KEY: '' } });
    [, url] = (await server.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)) as unknown as [string, string];
  });
  afterAll(() => server?.stop());

  it('starts and prints what the page shows', () => {
    expect(normaliseOutput(server.output())).toEqual(shownOutputContaining('listening on'));
  });

  it('answers the client script with the output the page shows, run after run', async () => {
    for (let run = 0; run < 2; run++) {
      const result = await runNode(documentedNodeArgs('docs/examples/try-first-portal.mjs'), { cwd: root, env: { PORTCULLIS_URL: url } });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(normaliseOutput(result.stdout)).toEqual(shownOutputContaining('ping as guest'));
    }
    expect(server.child.exitCode).toBeNull();
    expect(normaliseOutput(server.output())).toEqual(shownOutputContaining('listening on'));
  });
});
