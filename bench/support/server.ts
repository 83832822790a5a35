/**
 * The benchmarked server: the built service (`node dist/main.js`) as a child process on
 * 127.0.0.1, a free port and a temporary data directory, with rate limits and the paper price
 * feed out of the way and logs at warn. Started once ready; stopped with SIGTERM (SIGKILL after
 * 10 s), its data directory removed. BENCH_ECHO=1 shows its output.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.js';
import { serverNodeArgs } from './server-args.js';

/** The repository root (this file runs from dist-bench/bench/support/). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface BenchServer {
  readonly proc: ChildProcess;
  readonly port: number;
  /** `http://127.0.0.1:<port>/api/v1` */
  readonly api: string;
  readonly dataDir: string;
  /** What the server wrote to stderr so far. */
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * Starts the server with `env` on top of the benchmark defaults and waits until it is ready:
 * this checkout's build, or the one of the checkout at `root` (bench:orders-ab's baseline).
 */
/**
 * BENCH_SERVER_ENV="NAME=value NAME2=value2": settings for the service under test (for example
 * SQLITE_CHECKPOINT_INTERVAL_MS=200), to measure one without a rebuild. The bench's own
 * settings (ports, data directory, RATE_LIMITS_ENABLED, the feed) still win.
 */
function serverEnvOverrides(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (process.env.BENCH_SERVER_ENV ?? '').split(' ')) {
    const at = pair.indexOf('=');
    if (at > 0) out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

export async function startBenchServer(
  name: string,
  env: Record<string, string> = {},
  root: string = ROOT,
): Promise<BenchServer> {
  const main = join(root, 'dist', 'main.js');
  if (!existsSync(main)) throw new Error('dist/main.js missing: run npm run build');
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), `svc-bench-${name}-`));
  const echo = process.env.BENCH_ECHO !== undefined && process.env.BENCH_ECHO !== '';
  const proc = spawn(process.execPath, [...serverNodeArgs(), main], {
    cwd: root,
    env: {
      ...serverEnvOverrides(),
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      // One log line per request at info would go to a pipe nobody reads; warn keeps the logger
      // in the path (it is called) without measuring a pipe's back-pressure.
      LOG_LEVEL: 'warn',
      RATE_LIMITS_ENABLED: 'false',
      SANDBOX_FEED_INTERVAL_MS: '0',
      ...(process.env.BENCH_STALLS ? { BENCH_STALLS: process.env.BENCH_STALLS } : {}),
      ...env,
    },
    stdio: ['ignore', echo ? 'inherit' : 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
    if (echo) process.stderr.write(c);
  });
  const api = `http://127.0.0.1:${port}/api/v1`;
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  // Generous: on a shared, loaded machine the boot alone can take tens of seconds.
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (proc.exitCode !== null) {
      await stop();
      throw new Error(`server exited: ${stderr}`);
    }
    try {
      const res = await fetch(`${api}/health/ready`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`server not ready: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { proc, port, api, dataDir, stderr: () => stderr, stop };
}
