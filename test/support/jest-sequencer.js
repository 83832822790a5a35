// Jest's test order: longest first, so that on two workers the last suite to finish starts early
// instead of alone at the end of the run.
//
// Jest's own sequencer knows a file's duration from its cache of the last run; without one (a fresh
// clone, CI) it orders by file size, which says nothing about a suite file that is a list of imports.
// So a file's weight here is, in order: Jest's cached duration of it; for an e2e suite, the sum of
// its case files' seconds in test/e2e/suites/case-seconds.json (measured, committed), a case file
// missing there counting its size at the table's own bytes per second (a case file run alone
// likewise); for anything else (unit specs, about a second each) its size at 1,100 bytes a
// second, which puts it after the suites. Files
// that failed last time still run first, as with Jest's sequencer.
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import TestSequencerModule from '@jest/test-sequencer';
import { CASE_SUFFIX, SUITE_DIR, SUITE_SUFFIX, importedCases } from './jest-suites.js';

const TestSequencer = TestSequencerModule.default ?? TestSequencerModule;
const SECONDS_TABLE = 'case-seconds.json';

function size(path) {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export default class LongestFirstSequencer extends TestSequencer {
  /** e2e directory → {seconds: {case: s}, bytesPerSecond} */
  #tables = new Map();

  #table(e2eDir) {
    let table = this.#tables.get(e2eDir);
    if (table === undefined) {
      let seconds = {};
      try {
        seconds = JSON.parse(readFileSync(join(e2eDir, SUITE_DIR, SECONDS_TABLE), 'utf8'));
      } catch {
        // No table: every case file is weighed by its size.
      }
      let bytes = 0;
      let total = 0;
      for (const [c, s] of Object.entries(seconds)) {
        const b = size(join(e2eDir, c));
        if (b > 0 && s > 0) {
          bytes += b;
          total += s;
        }
      }
      table = { seconds, bytesPerSecond: total > 0 ? bytes / total : 1100 };
      this.#tables.set(e2eDir, table);
    }
    return table;
  }

  /** Estimated seconds of a test file that has no cached duration. */
  estimate(path) {
    const isSuite = path.endsWith(SUITE_SUFFIX) && basename(dirname(path)) === SUITE_DIR;
    const e2eDir = isSuite ? dirname(dirname(path)) : undefined;
    if (e2eDir === undefined) {
      // A case file run as a file of its own (SVC_JEST_CASE_FILES=1), or a unit spec.
      if (!path.endsWith(CASE_SUFFIX)) return size(path) / 1100;
      const table = this.#table(dirname(path));
      return table.seconds[basename(path)] ?? size(path) / table.bytesPerSecond;
    }
    const table = this.#table(e2eDir);
    const cases = importedCases(readFileSync(path, 'utf8'), basename(path), e2eDir);
    let total = 0;
    for (const c of cases) {
      total += table.seconds[c] ?? size(join(e2eDir, c)) / table.bytesPerSecond;
    }
    return total;
  }

  sort(tests) {
    const weight = new Map();
    for (const test of tests) {
      // Jest's field: its scheduler reads it (run in band when every known time is short).
      test.duration = this.time(test);
      weight.set(test, test.duration != null ? test.duration / 1000 : this.estimate(test.path));
    }
    return tests.sort((a, b) => {
      const failedA = this.hasFailed(a);
      if (failedA !== this.hasFailed(b)) return failedA ? -1 : 1;
      return weight.get(b) - weight.get(a) || (a.path < b.path ? -1 : 1);
    });
  }
}
