import { describe, expect, it } from '@jest/globals';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { Writable } from 'node:stream';
import { lazyRequestLogger } from './request-logger.js';

function capture(): { root: FastifyBaseLogger; lines: () => Record<string, unknown>[] } {
  const out: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      out.push(chunk.toString());
      done();
    },
  });
  const root = pino({ level: 'info' }, sink) as unknown as FastifyBaseLogger;
  return {
    root,
    lines: () =>
      out
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('lazyRequestLogger', () => {
  it('makes no pino child until something logs through it', () => {
    const { root } = capture();
    let children = 0;
    const child = root.child.bind(root);
    root.child = ((...args: Parameters<FastifyBaseLogger['child']>) => {
      children++;
      return child(...args);
    }) as FastifyBaseLogger['child'];
    const log = lazyRequestLogger(root, { reqId: 'req_1' }, {});
    expect(children).toBe(0);
    expect(log.level).toBe('info');
    log.info('first');
    log.warn('second');
    expect(children).toBe(1);
  });

  it('writes what it is given with the request id, at the parent level', () => {
    const { root, lines } = capture();
    const log = lazyRequestLogger(root, { reqId: 'req_2' }, {});
    log.debug('not written at info');
    log.error({ code: 'X' }, 'written');
    expect(lines()).toEqual([
      expect.objectContaining({ reqId: 'req_2', code: 'X', msg: 'written' }),
    ]);
    const child = log.child({ part: 'a' }) as unknown as pino.Logger;
    expect(child.bindings()).toEqual({ reqId: 'req_2', part: 'a' });
  });
});
