import { describe, expect, it } from '@jest/globals';
import type { Test } from '@jest/test-result';
import { fileURLToPath } from 'node:url';
import LongestFirstSequencer from './jest-sequencer.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const e2e = (file: string) => `${ROOT}test/e2e/${file}`;

/** Jest's Test for a path, in a context without a timing cache (a fresh clone). */
function fresh(path: string): Test {
  return { path, context: { config: { cache: false, id: 'spec' } } } as unknown as Test;
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
    const sorted = sequencer.sort(paths.map(fresh)).map((t) => t.path);
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
});
