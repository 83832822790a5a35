// Which e2e case files (test/e2e/**/*.e2e-spec.ts) each suite file (test/e2e/suites/*.e2e-suite.ts)
// imports, read from the suites' sources. jest.config.js refuses to run when a case file is in no
// suite (it would silently never run) or in two (it would run twice), and the test sequencer
// (jest-sequencer.js) weighs a suite by the case files it imports.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

export const SUITE_DIR = 'suites';
export const SUITE_SUFFIX = '.e2e-suite.ts';
export const CASE_SUFFIX = '.e2e-spec.ts';

// `import('../orders-place.e2e-spec.js')`: a suite names its case files with literal dynamic imports.
const CASE_IMPORT = /import\(\s*(['"])([^'"]+\.e2e-spec)\.js\1\s*\)/g;

/** Every file under dir, relative to it with `/` separators, skipping the suites directory. */
function walk(dir, skip) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (full !== skip) out.push(...walk(full, skip).map((f) => `${entry.name}/${f}`));
    } else out.push(entry.name);
  }
  return out;
}

/** The case files a suite source imports, as paths relative to the e2e directory. */
export function importedCases(suiteSource, suiteFile, e2eDir) {
  const found = [];
  for (const m of suiteSource.matchAll(CASE_IMPORT)) {
    const target = resolve(join(e2eDir, SUITE_DIR, suiteFile, '..'), `${m[2]}.ts`);
    found.push(relative(e2eDir, target).split(sep).join('/'));
  }
  return found;
}

/**
 * The suites, the case files, and what is wrong between them: `{suites: {suite: [case, ...]},
 * cases: [case, ...], problems: [sentence, ...]}`, paths relative to e2eDir.
 */
export function suiteMembership(e2eDir) {
  const suiteDir = join(e2eDir, SUITE_DIR);
  const cases = walk(e2eDir, suiteDir)
    .filter((f) => f.endsWith(CASE_SUFFIX))
    .sort();
  const suites = {};
  for (const name of walk(suiteDir, undefined)
    .filter((f) => f.endsWith(SUITE_SUFFIX))
    .sort()) {
    suites[name] = importedCases(readFileSync(join(suiteDir, name), 'utf8'), name, e2eDir);
  }
  return { suites, cases, problems: membershipProblems(suites, cases) };
}

/** The problems of a suites → case files assignment (empty when every case file runs once). */
export function membershipProblems(suites, cases) {
  const problems = [];
  const owners = new Map();
  for (const [suite, imported] of Object.entries(suites)) {
    if (imported.length === 0) problems.push(`${SUITE_DIR}/${suite} imports no case file`);
    for (const c of imported) owners.set(c, [...(owners.get(c) ?? []), suite]);
  }
  const known = new Set(cases);
  for (const c of cases) {
    const by = owners.get(c) ?? [];
    if (by.length === 0) problems.push(`${c} is imported by no suite in test/e2e/${SUITE_DIR}/`);
    if (by.length > 1) problems.push(`${c} is imported by ${by.length} suites: ${by.join(', ')}`);
  }
  for (const [c, by] of owners) {
    if (!known.has(c)) problems.push(`${by.join(', ')} imports ${c}, which does not exist`);
  }
  return problems;
}
