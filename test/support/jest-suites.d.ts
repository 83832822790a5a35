// Types of jest-suites.js (plain JavaScript: jest.config.js imports it before any transform).
export declare const SUITE_DIR: string;
export declare const SUITE_SUFFIX: string;
export declare const CASE_SUFFIX: string;
export declare function importedCases(
  suiteSource: string,
  suiteFile: string,
  e2eDir: string,
): string[];
export declare function suiteMembership(e2eDir: string): {
  suites: Record<string, string[]>;
  cases: string[];
  problems: string[];
};
export declare function membershipProblems(
  suites: Record<string, string[]>,
  cases: string[],
): string[];
