import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { defineConfig, type Plugin } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));
const packages = ['protocol', 'core', 'express', 'ws', 'tcp', 'udp', 'client'];

/**
 * Vite's esbuild transform drops `design:paramtypes`, which tsyringe needs for
 * constructor injection. TypeScript's own transpiler emits it, so tests run the
 * same decorator output as `tsc -b`.
 */
function typescriptWithDecoratorMetadata(): Plugin {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    sourceMap: true,
    inlineSources: true,
    useDefineForClassFields: true,
  };
  return {
    name: 'portcullis:typescript-decorator-metadata',
    enforce: 'pre',
    transform(code, id) {
      if (!/\.ts$/.test(id) || id.includes('/node_modules/')) return null;
      const out = ts.transpileModule(code, { compilerOptions: options, fileName: id });
      return { code: out.outputText, map: out.sourceMapText ? JSON.parse(out.sourceMapText) : null };
    },
  };
}

export default defineConfig({
  plugins: [typescriptWithDecoratorMetadata()],
  esbuild: false,
  resolve: {
    alias: [
      { find: /^@portcullis\/client\/node$/, replacement: `${root}packages/client/src/node.ts` },
      { find: /^@portcullis\/core\/(transport|testing)$/, replacement: `${root}packages/core/src/$1.ts` },
      ...packages.map((name) => ({ find: new RegExp(`^@portcullis/${name}$`), replacement: `${root}packages/${name}/src/index.ts` })),
    ],
  },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    env: { PORTCULLIS_TEST: '1' },
  },
});
