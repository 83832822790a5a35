// Its own module so that test/support/process.ts (child-process boots) uses it without loading
// the in-process app that harness.ts imports.

/** scrypt N the test apps hash passwords with unless a test sets PASSWORD_SCRYPT_COST. */
export const TEST_SCRYPT_COST = '1024';

/**
 * `{PASSWORD_SCRYPT_COST: '1024'}` for an app environment that does not set it itself, except on
 * APP_ENV=production, which refuses a cost below 32768 (those apps keep the real cost). At the
 * production cost every sign-up, login and seeded account costs ~32 MiB and tens of milliseconds of
 * scrypt, which over the suite's hundreds of registrations and logins is minutes on a loaded
 * two-core machine; the cost is no rule any test checks except the ones that ask for it.
 */
export function testScryptCost(env: Record<string, string> = {}): Record<string, string> {
  if (env.PASSWORD_SCRYPT_COST !== undefined || env.APP_ENV?.trim() === 'production') return {};
  return { PASSWORD_SCRYPT_COST: TEST_SCRYPT_COST };
}
