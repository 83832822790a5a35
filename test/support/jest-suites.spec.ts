import { describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importedCases, membershipProblems, suiteMembership } from './jest-suites.js';

const E2E = fileURLToPath(new URL('../e2e', import.meta.url));

describe('e2e suite membership', () => {
  it('this repository: every case file is imported by exactly one suite', () => {
    const { suites, cases, problems } = suiteMembership(E2E);
    expect(problems).toEqual([]);
    expect(cases.length).toBeGreaterThan(100);
    expect(Object.values(suites).flat().sort()).toEqual(cases);
  });

  it('reads the literal dynamic imports of a suite, relative to the e2e directory', () => {
    const src = [
      "await caseFile('a.e2e-spec.ts', () => import('../a.e2e-spec.js'));",
      'await caseFile("b", () => import("../deep/b.e2e-spec.js"));',
      "import { caseFile } from '../../support/jest-suite.js';",
    ].join('\n');
    expect(importedCases(src, 'x.e2e-suite.ts', '/r/test/e2e')).toEqual([
      'a.e2e-spec.ts',
      'deep/b.e2e-spec.ts',
    ]);
  });

  it('names a case file in no suite, one in two suites, a missing one and an empty suite', () => {
    const problems = membershipProblems(
      {
        'one.e2e-suite.ts': ['a.e2e-spec.ts', 'b.e2e-spec.ts'],
        'two.e2e-suite.ts': ['b.e2e-spec.ts', 'gone.e2e-spec.ts'],
        'empty.e2e-suite.ts': [],
      },
      ['a.e2e-spec.ts', 'b.e2e-spec.ts', 'c.e2e-spec.ts'],
    );
    expect(problems).toEqual([
      'suites/empty.e2e-suite.ts imports no case file',
      'b.e2e-spec.ts is imported by 2 suites: one.e2e-suite.ts, two.e2e-suite.ts',
      'c.e2e-spec.ts is imported by no suite in test/e2e/suites/',
      'two.e2e-suite.ts imports gone.e2e-spec.ts, which does not exist',
    ]);
  });

  it('walks a directory tree: case files in subdirectories count, the suites directory does not', () => {
    const dir = mkdtempSync(join(tmpdir(), 'suites-spec-'));
    try {
      mkdirSync(join(dir, 'suites'));
      mkdirSync(join(dir, 'deep'));
      writeFileSync(join(dir, 'a.e2e-spec.ts'), '');
      writeFileSync(join(dir, 'deep', 'b.e2e-spec.ts'), '');
      writeFileSync(join(dir, 'suites', 'stray.e2e-spec.ts'), '');
      writeFileSync(join(dir, 'suites', 's.e2e-suite.ts'), "import('../a.e2e-spec.js');");
      const { suites, cases, problems } = suiteMembership(dir);
      expect(cases).toEqual(['a.e2e-spec.ts', 'deep/b.e2e-spec.ts']);
      expect(suites).toEqual({ 's.e2e-suite.ts': ['a.e2e-spec.ts'] });
      expect(problems).toEqual(['deep/b.e2e-spec.ts is imported by no suite in test/e2e/suites/']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
