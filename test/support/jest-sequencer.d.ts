// Types of jest-sequencer.js (plain JavaScript: Jest loads it untransformed).
import type { Test } from '@jest/test-result';

export const PASS_FACTOR: Record<string, number>;

export default class LongestFirstSequencer {
  constructor(options: unknown);
  /** Estimated seconds of a file without a cached duration, in a project (displayName). */
  estimate(path: string, project?: string): number;
  sort(tests: Test[]): Test[];
}
