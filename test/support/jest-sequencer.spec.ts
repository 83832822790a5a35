import { describe, expect, it } from '@jest/globals';
import type { Test } from '@jest/test-result';
import { fileURLToPath } from 'node:url';
import LongestFirstSequencer, { PASS_FACTOR } from './jest-sequencer.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const e2e = (file: string) => `${ROOT}test/e2e/${file}`;

/** Jest's Test for a path, in a context without a timing cache (a fresh clone). */
function fresh(path: string, project?: string): Test {
  const displayName = project === undefined ? undefined : { name: project, color: 'white' };
  return {
    path,
    context: { config: { cache: false, id: `spec-${project}`, displayName } },
  } as unknown as Test;
}

describe('LongestFirstSequencer without a timing cache', () => {
  const sequencer = new LongestFirstSequencer({ contexts: [], globalConfig: {} } as never);

  it("weighs a suite by its case files' measured seconds, longest first, unit specs last", () => {
    const paths = [
      `${ROOT}src/common/clock/iso.spec.ts`,
      e2e('suites/meta.e2e-suite.ts'),
      e2e('suites/schema-fuzz.e2e-suite.ts'),
      e2e('suites/config-boot.e2e-suite.ts'),
    ];
    const sorted = sequencer.sort(paths.map((p) => fresh(p))).map((t) => t.path);
    expect(sorted).toEqual([paths[2], paths[3], paths[1], paths[0]]);
  });

  it('a suite weighs the sum of its case files; one missing from the table its size', () => {
    // schema-fuzz is alone in its suite and in the committed table.
    expect(sequencer.estimate(e2e('suites/schema-fuzz.e2e-suite.ts'))).toBeGreaterThan(30);
    const meta = sequencer.estimate(e2e('suites/meta.e2e-suite.ts'));
    const parts = ['health', 'logs', 'changelog', 'first-contact'].map((f) =>
      sequencer.estimate(e2e(`${f}.e2e-spec.ts`)),
    );
    expect(meta).toBeCloseTo(
      parts.reduce((a, b) => a + b, 0),
      6,
    );
    expect(Math.min(...parts)).toBeGreaterThan(0);
  });

  it('weighs the PostgreSQL pass of a suite without the case files it leaves out (sqlite-pass-only.js)', () => {
    const suite = e2e('suites/config-boot.e2e-suite.ts');
    const kept = sequencer.estimate(e2e('tier-decision-transaction.e2e-spec.ts'));
    expect(sequencer.estimate(suite, 'e2e')).toBeGreaterThan(kept * 2);
    expect(sequencer.estimate(suite, 'e2e-pg')).toBeCloseTo(kept * PASS_FACTOR['e2e-pg'], 6);
  });

  it('weighs the PostgreSQL pass of a suite by its factor, and the cluster suite by its own table', () => {
    const suite = e2e('suites/schema-fuzz.e2e-suite.ts');
    const cluster = `${ROOT}test/cluster/cluster.cluster-spec.ts`;
    expect(PASS_FACTOR['e2e-pg']).toBeGreaterThan(1);
    expect(sequencer.estimate(suite, 'e2e-pg')).toBeCloseTo(
      sequencer.estimate(suite, 'e2e') * PASS_FACTOR['e2e-pg'],
      6,
    );
    // Measured (test/cluster/case-seconds.json), not its size: well past any unit spec.
    expect(sequencer.estimate(cluster, 'cluster')).toBeGreaterThan(30);
    const meta = e2e('suites/meta.e2e-suite.ts');
    const sorted = sequencer
      .sort([
        fresh(meta, 'e2e'),
        fresh(suite, 'e2e'),
        fresh(suite, 'e2e-pg'),
        fresh(meta, 'e2e-pg'),
      ])
      .map(
        (t) =>
          `${t.path.slice(ROOT.length)} ${(t.context.config.displayName as { name: string }).name}`,
      );
    expect(sorted).toEqual([
      'test/e2e/suites/schema-fuzz.e2e-suite.ts e2e-pg',
      'test/e2e/suites/schema-fuzz.e2e-suite.ts e2e',
      'test/e2e/suites/meta.e2e-suite.ts e2e-pg',
      'test/e2e/suites/meta.e2e-suite.ts e2e',
    ]);
  });
});
