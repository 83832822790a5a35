/**
 * Starts the lean reference server (support/reference-server.ts) as a child process on a free
 * port with a fresh SQLite file in the OS temp dir, removed again on stop.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.js';

const SERVER = fileURLToPath(new URL('./reference-server.js', import.meta.url));

export interface ReferenceServer {
  readonly proc: ChildProcess;
  readonly port: number;
  /** Rows the server has stored (one per 201). */
  rowCount(): Promise<number>;
  stop(): Promise<void>;
}

export async function startReferenceServer(): Promise<ReferenceServer> {
  const port = await freePort();
  const dbPath = join(tmpdir(), `svc-bench-reference-${process.pid}-${Date.now()}.db`);
  const proc = fork(SERVER, [String(port), dbPath], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    // As generous as the service's: at load ~25 on 2 cores the fork alone took over 15 s.
    const timer = setTimeout(
      () => reject(new Error('reference server not ready in 120 s')),
      120_000,
    );
    proc.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('LISTENING')) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.once('exit', (code) => reject(new Error(`reference server exited (${code})`)));
  });
  const rowCount = (): Promise<number> =>
    new Promise((resolve) => {
      proc.once('message', (m) => resolve((m as { count: number }).count));
      proc.send('count');
    });
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    for (const suffix of ['', '-wal', '-shm']) rmSync(dbPath + suffix, { force: true });
  };
  return { proc, port, rowCount, stop };
}
