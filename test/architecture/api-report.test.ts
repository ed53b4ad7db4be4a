/**
 * The public surface shows in review: each package's checked-in API report
 * (`api/<package>.api.md`) is what its built declarations export, and every entry
 * point lists its names one by one. `npm run api` rewrites the reports; `npm test`
 * builds first, so the reports are compared with the code under test.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { API_COMMAND, apiReports, packageEntries } from '../../scripts/api-report.mjs';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const reports = [...apiReports(repo)];
const entrySources = packageEntries(repo).flatMap((pkg) =>
  pkg.entries.map((entry) => join(pkg.dir, entry.types.slice(pkg.dir.length).replace(/^[\\/]dist[\\/]/, 'src/').replace(/\.d\.ts$/, '.ts'))),
);

describe('API reports', () => {
  it.each(reports)('api/%s matches the built declarations', (file, built) => {
    const path = join(repo, 'api', file);
    const checkedIn = existsSync(path) ? readFileSync(path, 'utf8') : '(missing)';
    expect(checkedIn, `api/${file} is out of date: run \`${API_COMMAND}\` and commit api/`).toBe(built);
  });

  it('keeps no report of a package that has none', () => {
    const stale = readdirSync(join(repo, 'api')).filter((file) => file.endsWith('.api.md') && !reports.some(([name]) => name === file));
    expect(stale, `remove these and run \`${API_COMMAND}\``).toEqual([]);
  });

  it.each(entrySources.map((file) => [file.slice(repo.length), file]))('%s lists its names one by one (no export *)', (_name, file) => {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    const wildcards = source.statements.filter((statement) => ts.isExportDeclaration(statement) && (!statement.exportClause || ts.isNamespaceExport(statement.exportClause)));
    expect(wildcards.map((statement) => statement.getText(source))).toEqual([]);
  });
});
