import { afterEach, describe, expect, it } from '@jest/globals';
import Fastify, { type FastifyInstance } from 'fastify';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Writable } from 'node:stream';
import { mapError } from '../../common/errors/error-mapper.js';
import { registerWebApp } from './web-app.static.js';

function server(dir: string, lines: string[]): FastifyInstance {
  const log = pino(
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString('utf8'));
        cb();
      },
    }),
  );
  const fastify = Fastify();
  // As the service answers a DomainError: the contract's status and body.
  fastify.setErrorHandler((err, _req, reply) => {
    const mapped = mapError(err, 'req_test');
    void reply.code(mapped.status).send(mapped.body);
  });
  registerWebApp(fastify, log, dir);
  return fastify;
}

describe('registerWebApp', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('without a build, /app answers 404 and says why in the log; the server still starts', async () => {
    const lines: string[] = [];
    const fastify = server(join(tmpdir(), 'no-such-build-dir/'), lines);
    await fastify.ready();
    for (const url of ['/app', '/app/', '/app/markets/x']) {
      const res = await fastify.inject({ url });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('NOT_FOUND');
    }
    expect(lines.join('')).toContain('the demo web app is not built');
    await fastify.close();
  });

  it('serves the built files, the page for any other /app path, and 404 for a missing asset', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'web-app-')) + '/';
    dirs.push(dir);
    mkdirSync(`${dir}assets`);
    writeFileSync(`${dir}index.html`, '<!doctype html><title>t</title>');
    writeFileSync(`${dir}assets/app-1.js`, 'console.log(1)');
    const fastify = server(dir, []);
    await fastify.ready();
    const js = await fastify.inject({ url: '/app/assets/app-1.js' });
    expect(js.statusCode).toBe(200);
    expect(js.body).toBe('console.log(1)');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    for (const url of ['/app', '/app/', '/app/markets/mkt_1', '/app/portfolio?x=1']) {
      const res = await fastify.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toBe('<!doctype html><title>t</title>');
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    }
    expect((await fastify.inject({ url: '/app/assets/app-2.js' })).statusCode).toBe(404);
    await fastify.close();
  });
});
