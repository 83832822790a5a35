import { createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now (benchmarks start their server on it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = addr !== null && typeof addr === 'object' ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
