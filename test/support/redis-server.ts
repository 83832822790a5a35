import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from './process.js';

/**
 * A throwaway `redis-server` (Debian's package) on a free port, no persistence, for the tests of
 * the Redis stores. `stop()` kills it (a crash, as far as clients can tell); `start()` brings a
 * fresh, empty one up on the same port.
 */
export class RedisServer {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.start();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.child !== null) return;
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    let output = '';
    child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(this.port))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        this.child = null;
        child.kill('SIGKILL');
        throw new Error(`redis-server did not start on ${this.port}: ${output.slice(-500)}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /**
   * SIGSTOP: a frozen Redis (as under `DEBUG SLEEP` or a stalled host): connections stay open,
   * commands are accepted into the socket and nothing answers until {@link thaw}.
   */
  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  /** SIGCONT: the frozen Redis runs again, and answers what queued meanwhile. */
  thaw(): void {
    this.child?.kill('SIGCONT');
  }

  /** SIGKILL, and waits until the process is gone. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child === null) return;
    this.child = null;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  }
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    let data = '';
    s.setTimeout(500, () => {
      s.destroy();
      resolve(false);
    });
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (c: Buffer) => {
      data += c.toString();
      if (data.includes('\r\n')) {
        s.destroy();
        resolve(data.startsWith('+PONG'));
      }
    });
    s.on('error', () => resolve(false));
  });
}
