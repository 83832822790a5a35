// Types of jest-sequencer.js (plain JavaScript: Jest loads it untransformed).
import type { Test } from '@jest/test-result';

export default class LongestFirstSequencer {
  constructor(options: unknown);
  estimate(path: string): number;
  sort(tests: Test[]): Test[];
}
