import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExportThread, exportWorkerFile, type ExportThreadJob } from './export-thread.js';

const dir = mkdtempSync(join(tmpdir(), 'export-thread-'));
const job: ExportThreadJob = {
  source: { sqliteFile: join(dir, 'none.sqlite') },
  dataset: 'TRADES',
  format: 'CSV',
  userId: 'usr_x',
  start: '2026-01-01T00:00:00.000Z',
  end: '2026-02-01T00:00:00.000Z',
  marketIds: null,
  hi: 0,
  path: join(dir, 'x.csv.part'),
  batchRows: 10,
};

/** A stand-in worker program, to see how the thread reports each way a worker can end. */
function program(name: string, source: string): string {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, `import { parentPort, workerData } from 'node:worker_threads';\n${source}`);
  return file;
}

// The worker is unref'd (it never keeps a process alive); this keeps Jest's loop busy meanwhile.
const alive = setInterval(() => undefined, 1000);
afterAll(() => {
  clearInterval(alive);
  rmSync(dir, { recursive: true, force: true });
});

describe('ExportThread', () => {
  it('resolves with the figures once the worker has reported them and exited, keeping its progress', async () => {
    const t = new ExportThread(
      job,
      program(
        'done',
        `parentPort.postMessage({ type: 'progress', records: 7 });
         parentPort.postMessage({ type: 'done', written: { records: workerData.hi + 9, bytes: 90, sha256: 'ab' } });`,
      ),
    );
    await expect(t.done).resolves.toEqual({ records: 9, bytes: 90, sha256: 'ab' });
    expect(t.records).toBe(7);
  });

  it("rejects with the worker's own error message when it reports a failure", async () => {
    const t = new ExportThread(
      job,
      program('failed', `parentPort.postMessage({ type: 'failed', message: 'no such table: x' });`),
    );
    await expect(t.done).rejects.toThrow('no such table: x');
  });

  it('rejects naming the crash when the worker throws', async () => {
    const t = new ExportThread(job, program('throws', `throw new Error('disk on fire');`));
    await expect(t.done).rejects.toThrow('export worker crashed: disk on fire');
  });

  it('rejects with the exit code when the worker exits without a result', async () => {
    const t = new ExportThread(job, program('exits', 'process.exit(7);'));
    await expect(t.done).rejects.toThrow('export worker stopped (exit code 7)');
  });

  it('a result followed by a crash is a failure, not a result', async () => {
    const t = new ExportThread(
      job,
      program(
        'done-then-throws',
        `parentPort.postMessage({ type: 'done', written: { records: 1, bytes: 1, sha256: 'ab' } });
         setTimeout(() => { throw new Error('late'); }, 10);`,
      ),
    );
    await expect(t.done).rejects.toThrow('export worker crashed: late');
  });

  it('stop() terminates a worker that is still running', async () => {
    const t = new ExportThread(job, program('forever', 'setInterval(() => undefined, 1000);'));
    const started = Date.now();
    await t.stop();
    await expect(t.done).rejects.toThrow(/export worker stopped/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('refuses to start without the worker program, saying to build', () => {
    expect(() => new ExportThread(job, join(dir, 'missing.js'))).toThrow(/npm run build/);
  });

  it("finds the build's program when it runs from the TypeScript sources", () => {
    expect(exportWorkerFile()).toMatch(
      /[/\\]dist[/\\]modules[/\\]data-exports[/\\]export-worker\.js$/,
    );
  });
});
