// Jest's test order: longest first, so that on two workers the last suite to finish starts early
// instead of alone at the end of the run.
//
// Jest's own sequencer knows a file's duration from its cache of the last run; without one (a fresh
// clone, CI) it orders by file size, which says nothing about a suite file that is a list of imports.
// So a file's weight here is, in order: Jest's cached duration of it; for an e2e suite, the sum of
// its case files' seconds in test/e2e/suites/case-seconds.json (measured, committed), a case file
// missing there counting its size at the table's own bytes per second (a case file run alone
// likewise); for another file listed in a case-seconds.json beside it (the cluster suite,
// test/cluster/case-seconds.json), that; for anything else (unit specs, about a second each) its
// size at 1,100 bytes a second, which puts it after the suites. The `e2e-pg` project runs the same
// suite files on PostgreSQL + Redis, slower by PASS_FACTOR, without the case files it leaves out
// (sqlite-pass-only.js). Files that failed last time still run
// first, as with Jest's sequencer.
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import TestSequencerModule from '@jest/test-sequencer';
import { CASE_SUFFIX, SUITE_DIR, SUITE_SUFFIX, importedCases } from './jest-suites.js';
import { SQLITE_PASS_ONLY } from './sqlite-pass-only.js';

const TestSequencer = TestSequencerModule.default ?? TestSequencerModule;
const SECONDS_TABLE = 'case-seconds.json';
/**
 * How much longer a project's files take than the seconds measured on SQLite (the table's): the
 * `e2e-pg` pass (a database created per boot, every statement a round trip to the server).
 */
export const PASS_FACTOR = { 'e2e-pg': 1.5 };

/** A case-seconds.json table ({file: seconds}), or {} when there is none. */
function readSeconds(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return {};
  }
}

function size(path) {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** A project's displayName (a string, or {name, color} once Jest has normalised it). */
function projectOf(config) {
  const d = config?.displayName;
  return typeof d === 'string' ? d : d?.name;
}

export default class LongestFirstSequencer extends TestSequencer {
  /** e2e directory → {seconds: {case: s}, bytesPerSecond} */
  #tables = new Map();

  /** The table of a directory that is not an e2e directory (test/cluster), memoised. */
  #ownTable(dir) {
    const key = `own:${dir}`;
    let table = this.#tables.get(key);
    if (table === undefined) {
      table = { seconds: readSeconds(join(dir, SECONDS_TABLE)) };
      this.#tables.set(key, table);
    }
    return table;
  }

  #table(e2eDir) {
    let table = this.#tables.get(e2eDir);
    if (table === undefined) {
      // Without a table ({}), every case file is weighed by its size.
      const seconds = readSeconds(join(e2eDir, SUITE_DIR, SECONDS_TABLE));
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

  /** Estimated seconds of a test file that has no cached duration, in `project` (a displayName). */
  estimate(path, project) {
    // The PostgreSQL pass leaves out the case files of sqlite-pass-only.js.
    const leftOut = project === 'e2e-pg' ? SQLITE_PASS_ONLY : {};
    return this.#sqliteEstimate(path, leftOut) * (PASS_FACTOR[project] ?? 1);
  }

  #sqliteEstimate(path, leftOut) {
    const isSuite = path.endsWith(SUITE_SUFFIX) && basename(dirname(path)) === SUITE_DIR;
    const e2eDir = isSuite ? dirname(dirname(path)) : undefined;
    if (e2eDir === undefined) {
      // A case file run as a file of its own (SVC_JEST_CASE_FILES=1), or a unit spec.
      if (!path.endsWith(CASE_SUFFIX)) {
        // A file measured in a table of its own directory (the cluster suite).
        const own = this.#ownTable(dirname(path)).seconds[basename(path)];
        return own ?? size(path) / 1100;
      }
      const table = this.#table(dirname(path));
      return table.seconds[basename(path)] ?? size(path) / table.bytesPerSecond;
    }
    const table = this.#table(e2eDir);
    const cases = importedCases(readFileSync(path, 'utf8'), basename(path), e2eDir);
    let total = 0;
    for (const c of cases) {
      if (Object.hasOwn(leftOut, c)) continue;
      total += table.seconds[c] ?? size(join(e2eDir, c)) / table.bytesPerSecond;
    }
    return total;
  }

  sort(tests) {
    const weight = new Map();
    for (const test of tests) {
      // Jest's field: its scheduler reads it (run in band when every known time is short).
      test.duration = this.time(test);
      weight.set(
        test,
        test.duration != null
          ? test.duration / 1000
          : this.estimate(test.path, projectOf(test.context.config)),
      );
    }
    return tests.sort((a, b) => {
      const failedA = this.hasFailed(a);
      if (failedA !== this.hasFailed(b)) return failedA ? -1 : 1;
      return weight.get(b) - weight.get(a) || (a.path < b.path ? -1 : 1);
    });
  }
}
