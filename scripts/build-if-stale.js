// `npm start` builds only when dist/ is older than what it is built from, so a start on a current
// build takes seconds instead of a full compile. What the build reads is listed in package.json
// "buildInputs" (files and directories, walked recursively; a directory's own time changes when
// an entry is added or removed, so deletions count too). dist/.build-stamp is written only after
// `npm run build` succeeds: a failed or interrupted build is retried on the next start.
// Usage: node scripts/build-if-stale.js [project root, default the working directory]
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? '.');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const inputs = Array.isArray(pkg.buildInputs) ? pkg.buildInputs : ['src', 'package.json'];
const stamp = join(root, 'dist', '.build-stamp');

/** The newest modification time under a path (0 when it does not exist). */
function newest(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules') continue;
    max = Math.max(max, newest(join(path, entry)));
  }
  return max;
}

const source = Math.max(...inputs.map((p) => newest(join(root, p))));
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
if (built > 0 && built >= source) {
  console.log(`dist/ is current (built ${new Date(built).toISOString()}): not rebuilding`);
  process.exit(0);
}
console.log(
  built === 0
    ? 'dist/ has no finished build: building'
    : 'sources changed since the last build: building',
);
const started = new Date();
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const run = spawnSync(npm, ['run', 'build'], { cwd: root, stdio: 'inherit' });
if (run.status !== 0) process.exit(run.status ?? 1);
mkdirSync(join(root, 'dist'), { recursive: true });
// Dated when the build began, so a source edited while it ran is newer and rebuilds next time.
writeFileSync(stamp, `${started.toISOString()}\n`);
utimesSync(stamp, started, started);
