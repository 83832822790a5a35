// setupFiles of the `e2e-pg` project (jest-passes.js): the harness's engine switch, set in this
// test file's environment only (Jest gives each test file its own copy of process.env), so a
// worker that runs an e2e-pg file and then an e2e one boots the first on PostgreSQL + Redis and
// the second on SQLite.
process.env.TEST_DATABASE = 'postgres';
