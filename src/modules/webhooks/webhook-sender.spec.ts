import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { RESPONSE_EXCERPT_BYTES } from './webhook-attempts.repository.js';
import { refusedError, sendWebhook, timeoutError } from './webhook-sender.js';

const OPTS = { timeoutMs: 400, allowPrivate: true };

describe('sendWebhook: outcome, the 4 KiB excerpt and the timeout', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  });

  async function serve(handler: (res: ServerResponse) => void): Promise<string> {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => handler(res));
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  }

  it('a 2xx with an endless body: SUCCEEDED with the first 4096 bytes, truncated, at once', async () => {
    const url = await serve((res) => {
      res.writeHead(200);
      const chunk = 'a'.repeat(1000);
      const pump = (): void => {
        while (res.write(chunk));
        res.once('drain', pump);
      };
      pump();
    });
    // Ends as soon as 4 KiB are in, long before the (here 5 s) timeout.
    const began = Date.now();
    const r = await sendWebhook(url, '{}', {}, { ...OPTS, timeoutMs: 5_000 });
    expect(Date.now() - began).toBeLessThan(2_000);
    expect(r).toMatchObject({ ok: true, status: 200, outcome: 'SUCCEEDED', error: null });
    expect(r.responseBody).toBe('a'.repeat(RESPONSE_EXCERPT_BYTES));
    expect(r.responseTruncated).toBe(true);
  });

  it('a body of exactly 4096 bytes is whole, not truncated; a 500 keeps its status and body', async () => {
    const exact = await serve((res) => res.writeHead(200).end('b'.repeat(4096)));
    expect(await sendWebhook(exact, '{}', {}, OPTS)).toMatchObject({
      responseBody: 'b'.repeat(4096),
      responseTruncated: false,
    });
    const failing = await serve((res) => res.writeHead(500).end('boom'));
    expect(await sendWebhook(failing, '{}', {}, OPTS)).toMatchObject({
      ok: false,
      status: 500,
      outcome: 'HTTP_ERROR',
      error: 'HTTP 500',
      responseBody: 'boom',
    });
  });

  it('a receiver dripping its body cannot hold the attempt past the timeout; the status decides', async () => {
    const url = await serve((res) => {
      res.writeHead(201);
      const t = setInterval(() => res.write('x'), 30);
      res.on('close', () => clearInterval(t));
    });
    const began = Date.now();
    const r = await sendWebhook(url, '{}', {}, OPTS);
    const took = Date.now() - began;
    expect(took).toBeGreaterThanOrEqual(OPTS.timeoutMs - 20);
    expect(took).toBeLessThan(OPTS.timeoutMs + 300);
    expect(r).toMatchObject({ ok: true, status: 201, outcome: 'SUCCEEDED' });
    expect(r.responseBody).toMatch(/^x+$/);
    expect(r.responseTruncated).toBe(false);
  });

  it('no answer: TIMEOUT; a closed port: CONNECTION_REFUSED, worded as refusedError words it', async () => {
    const silent = await serve(() => undefined);
    expect(await sendWebhook(silent, '{}', {}, OPTS)).toEqual({
      ok: false,
      status: null,
      error: timeoutError(OPTS.timeoutMs),
      retryAfterSeconds: null,
      outcome: 'TIMEOUT',
      responseBody: null,
      responseTruncated: false,
    });
    const closed = await serve(() => undefined);
    const server = servers.pop()!;
    await new Promise<void>((r) => server.close(() => r()));
    const r = await sendWebhook(closed, '{}', {}, OPTS);
    expect(r).toMatchObject({ ok: false, status: null, outcome: 'CONNECTION_REFUSED' });
    expect(r.error).toBe(refusedError(closed));
  });
});
