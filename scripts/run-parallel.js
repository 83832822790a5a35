// Runs shell commands side by side and fails when any of them fails (after all have ended).
// `npm test` runs the lint beside the compile and the web app's build: each is one process on one
// core, and nothing else runs before Jest, so on a two-core machine doing them one after the other
// left a core idle for about a minute.
import { spawn } from 'node:child_process';

const commands = process.argv.slice(2);
if (commands.length === 0) {
  process.stderr.write('usage: node scripts/run-parallel.js "<command>" ["<command>" ...]\n');
  process.exit(2);
}
const codes = await Promise.all(
  commands.map(
    (command) =>
      new Promise((resolve) => {
        const child = spawn('/bin/sh', ['-c', command], { stdio: 'inherit' });
        child.on('error', (err) => {
          process.stderr.write(`${command}: ${err.message}\n`);
          resolve(1);
        });
        child.on('close', (code, signal) => resolve(code ?? (signal !== null ? 1 : 0)));
      }),
  ),
);
commands.forEach((command, i) => {
  if (codes[i] !== 0) process.stderr.write(`failed (exit ${codes[i]}): ${command}\n`);
});
process.exit(codes.some((c) => c !== 0) ? 1 : 0);
