// Makes sure better-sqlite3's native binding loads, compiling it when it does not.
// `npm test` runs this beside the lint and the compile, which never load the binding: .ci/run installs
// with `npm ci --ignore-scripts` and leaves the compile (node-gyp over SQLite's amalgamation: minutes
// of one core, as make builds its targets one after the other) to this step, so it no longer runs
// alone with the second core idle. Where the binding already loads (any npm ci/install), it only checks.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('..', import.meta.url));

function loads() {
  try {
    const Database = require('better-sqlite3');
    new Database(':memory:').close();
    return true;
  } catch (err) {
    process.stderr.write(
      `better-sqlite3 does not load (${err.message.split('\n')[0]}): building it\n`,
    );
    return false;
  }
}

if (!loads()) {
  // The package's own install script (a prebuilt binary when one is reachable, else node-gyp).
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  // SQLite's amalgamation at -O1 rather than the package's -O3 (appended last, so it wins): about
  // 41 s of one core instead of 91 s here, and this compile is what Jest waits for after a fresh
  // `npm ci --ignore-scripts`; the -O3 compile of tsc and the web app finish in under 30 s
  // beside it. Only this test-time fallback: `npm ci`/`npm install` with scripts (what `npm start`
  // installs with) builds the package's own -O3 binary, and the benchmarks run on that.
  const env = { ...process.env, CFLAGS: `${process.env.CFLAGS ?? ''} -O1`.trim() };
  const run = spawnSync(npm, ['rebuild', 'better-sqlite3'], { cwd: root, stdio: 'inherit', env });
  if (run.status !== 0) process.exit(run.status ?? 1);
  // A fresh module cache: the failed require above must not answer for the rebuilt package.
  const again = spawnSync(
    process.execPath,
    ['-e', "const D = require('better-sqlite3'); new D(':memory:').close();"],
    { cwd: root },
  );
  if (again.status !== 0) {
    process.stderr.write(`better-sqlite3 still does not load after the build:\n${again.stderr}\n`);
    process.exit(1);
  }
}
