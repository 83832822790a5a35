// The e2e case files the PostgreSQL + Redis pass (project `e2e-pg`) leaves out, and why.
//
// Each of them starts the service only as processes of its own (`node dist/main.js`, `npm start`,
// `npm run services`: test/support/process.ts without `testDatabase`) on DATA_DIRs of SQLite files,
// or no service at all. The pass's engine switch (TEST_DATABASE) reaches neither, so the
// PostgreSQL pass ran them unchanged, on SQLite, a second time: about 250 worker-seconds of the
// README test command that checked nothing new. They run once, in the SQLite pass.
//
// The rule is held, in both passes: while a listed file's tests and hooks run, booting an app on
// the pass's database (startApp without `sqliteFiles` or a DATABASE_URL of its own,
// serviceDatabaseEnv, or a process with `testDatabase`) throws (pass-guard.ts). A file that starts
// doing so must leave this list, and then runs in both passes. Plain JavaScript: the test
// sequencer reads it before any transform.
/** Case file (relative to test/e2e) → what it runs, on SQLite files whatever the pass. */
export const SQLITE_PASS_ONLY = {
  'config-boot.e2e-spec.ts':
    'boots `node dist/main.js` and `npm start` on DATA_DIRs of SQLite files: configuration bounds, secrets.json, exit codes',
  'data-dir.e2e-spec.ts': 'the DATA_DIR lock between two processes on the same SQLite files',
  'start-build.e2e-spec.ts': "`npm start`'s build step; no service",
  'services-script.e2e-spec.ts':
    '`npm run services`, which starts a PostgreSQL and a Redis of its own whatever the pass',
};
