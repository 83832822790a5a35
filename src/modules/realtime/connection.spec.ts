import { describe, expect, it, jest } from '@jest/globals';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { WebSocket, type WebSocketServer as WsServer } from 'ws';
import { MessageBudget } from './message-budget.js';

/**
 * The server side uses the ws copy the app's WsAdapter loads (@nestjs/platform-ws's own), so the
 * direct-write path is tested against the internals the server really runs on.
 */
const serverWs = createRequire(createRequire(import.meta.url).resolve('@nestjs/platform-ws'))(
  'ws',
) as { WebSocketServer: typeof WsServer };
const WebSocketServer = serverWs.WebSocketServer;
import {
  Connection,
  EventMessage,
  Feed,
  flushBatch,
  frameText,
  sendToFeed,
  startBatch,
  textFrame,
} from './connection.js';

/** A real server/client pair: the server side wrapped in a Connection, the client collecting. */
async function pair(maxBuffered = 1 << 20): Promise<{
  conn: Connection;
  server: WebSocket;
  received: string[];
  next: (n: number) => Promise<string[]>;
  close: () => Promise<void>;
}> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(wss, 'listening');
  const port = (wss.address() as AddressInfo).port;
  const accepted = once(wss, 'connection') as Promise<[WebSocket]>;
  const client = new WebSocket(`ws://127.0.0.1:${port}`);
  const received: string[] = [];
  const waiters: { n: number; resolve: (v: string[]) => void }[] = [];
  client.on('message', (data: Buffer) => {
    received.push(data.toString());
    for (const w of waiters.splice(0)) {
      if (received.length >= w.n) w.resolve(received.slice(0, w.n));
      else waiters.push(w);
    }
  });
  await once(client, 'open');
  const [server] = await accepted;
  const conn = new Connection(
    'c1',
    server,
    '127.0.0.1',
    maxBuffered,
    new MessageBudget(20, 100, 0),
  );
  return {
    conn,
    server,
    received,
    next: (n) =>
      received.length >= n
        ? Promise.resolve(received.slice(0, n))
        : new Promise((resolve) => waiters.push({ n, resolve })),
    close: async () => {
      client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

describe('EventMessage frames', () => {
  it('frames text with the 2-, 4- and 10-byte header forms of RFC 6455', () => {
    for (const [size, header] of [
      [125, 2],
      [126, 4],
      [65_535, 4],
      [65_536, 10],
    ] as const) {
      const frame = textFrame(Buffer.alloc(size - 1, 'a'), Buffer.from('b'));
      expect(frame.length).toBe(header + size);
      expect(frame[0]).toBe(0x81);
      const len =
        header === 2 ? frame[1] : header === 4 ? frame.readUInt16BE(2) : frame.readBigUInt64BE(2);
      expect(Number(len)).toBe(size);
      expect(frame[1] & 0x80).toBe(0); // server frames are never masked
      expect(frame.subarray(header).toString()).toBe('a'.repeat(size - 1) + 'b');
    }
  });

  it('builds one frame per distinct seq and the same text as the JSON it stands for', () => {
    const m = new EventMessage('orderbook:mkt_1', 1700000000000, { kind: 'delta', price: 40 });
    expect(m.frame(3)).toBe(m.frame(3));
    expect(m.frame(4)).not.toBe(m.frame(3));
    expect(JSON.parse(m.text(7))).toEqual({
      type: 'event',
      channel: 'orderbook:mkt_1',
      seq: 7,
      ts: 1700000000000,
      time: '2023-11-14T22:13:20.000Z', // the same instant, as the contract writes timestamps
      data: { kind: 'delta', price: 40 },
    });
    // After the frame header: 2 bytes, or 4 with a 16-bit length (this message is over 125).
    const frame = m.frame(7);
    const len = frame[1] & 0x7f;
    const header = len < 126 ? 2 : len === 126 ? 4 : 10;
    expect(frame.subarray(header).toString()).toBe(m.text(7));
    expect(frame.length - header).toBe(Buffer.byteLength(m.text(7)));
  });
});

describe('Connection.sendEvent over a real socket', () => {
  it('writes pre-built frames that a ws client reads, in order with ws-sent messages', async () => {
    const p = await pair();
    try {
      const a = new EventMessage('trades:m', 1, { n: 1 });
      const b = new EventMessage('trades:m', 2, { n: 2 });
      p.conn.sendJson({ type: 'subscribed' });
      p.conn.sendEvent('trades:m', a);
      p.conn.sendJson({ type: 'pong' });
      p.conn.sendEvent('trades:m', b);
      const got = (await p.next(4)).map((t) => JSON.parse(t) as Record<string, unknown>);
      expect(got.map((m) => m.type)).toEqual(['subscribed', 'event', 'pong', 'event']);
      expect(got.filter((m) => m.type === 'event').map((m) => [m.seq, m.data])).toEqual([
        [1, { n: 1 }],
        [2, { n: 2 }],
      ]);
    } finally {
      await p.close();
    }
  });

  it('takes the direct-write path with the ws the server runs (no per-connection ws.send)', async () => {
    const p = await pair();
    try {
      const send = jest.spyOn(p.server, 'send');
      p.conn.sendEvent('trades:m', new EventMessage('trades:m', 1, {}));
      await p.next(1);
      expect(send).not.toHaveBeenCalled();
    } finally {
      await p.close();
    }
  });

  it('a batch leaves in one plain write per connection, every message intact', async () => {
    const p = await pair();
    try {
      const raw = (p.server as unknown as { _socket: { write: (b: Buffer) => boolean } })._socket;
      const writev = jest.spyOn(raw as unknown as { _writev: () => void }, '_writev');
      const write = jest.spyOn(raw, 'write');
      const batch = startBatch();
      for (let i = 1; i <= 5; i++) {
        p.conn.sendEvent('orderbook:m', new EventMessage('orderbook:m', i, { i }), batch);
      }
      expect(batch.connections).toHaveLength(1); // joined once, however many messages
      expect(write).not.toHaveBeenCalled();
      flushBatch(batch);
      expect(write).toHaveBeenCalledTimes(1);
      expect(writev).not.toHaveBeenCalled();
      expect(batch.connections).toHaveLength(0);
      const got = (await p.next(5)).map((t) => JSON.parse(t) as { seq: number; data: unknown });
      expect(got.map((m) => [m.seq, m.data])).toEqual([1, 2, 3, 4, 5].map((i) => [i, { i }]));
    } finally {
      await p.close();
    }
  });

  it('a connection with one message in a batch gets that frame itself, no copy', async () => {
    const p = await pair();
    try {
      const raw = (p.server as unknown as { _socket: { write: (b: Buffer) => boolean } })._socket;
      const write = jest.spyOn(raw, 'write');
      const message = new EventMessage('orderbook:m', 1, { one: true });
      const batch = startBatch();
      p.conn.sendEvent('orderbook:m', message, batch);
      flushBatch(batch);
      expect(write).toHaveBeenCalledTimes(1);
      expect(write.mock.calls[0][0]).toBe(message.frame(1));
      expect(JSON.parse((await p.next(1))[0])).toMatchObject({ seq: 1, data: { one: true } });
    } finally {
      await p.close();
    }
  });

  it('keeps the order when ws starts holding frames back in the middle of a batch', async () => {
    const p = await pair();
    try {
      const sender = (p.server as unknown as { _sender: { _state: number; dequeue: () => void } })
        ._sender;
      const batch = startBatch();
      p.conn.sendEvent('trades:m', new EventMessage('trades:m', 1, { n: 1 }), batch);
      p.conn.sendEvent('trades:m', new EventMessage('trades:m', 2, { n: 2 }), batch);
      sender._state = 2; // ws 8: GET_BLOB_DATA, its sends queue up behind it
      p.conn.sendEvent('trades:m', new EventMessage('trades:m', 3, { n: 3 }), batch);
      p.conn.sendEvent('trades:m', new EventMessage('trades:m', 4, { n: 4 }), batch);
      flushBatch(batch);
      sender._state = 0;
      sender.dequeue();
      const got = (await p.next(4)).map((t) => JSON.parse(t) as { seq: number; data: unknown });
      expect(got.map((m) => [m.seq, m.data])).toEqual([1, 2, 3, 4].map((n) => [n, { n }]));
    } finally {
      await p.close();
    }
  });

  it('judges the send buffer once per batch: a batch bigger than the bound is no slow consumer', async () => {
    const p = await pair(256);
    try {
      const batch = startBatch();
      const data = { pad: 'x'.repeat(100) };
      for (let i = 1; i <= 10; i++) {
        p.conn.sendEvent('orderbook:m', new EventMessage('orderbook:m', i, data), batch);
      }
      expect(p.conn.closed).toBe(false);
      flushBatch(batch);
      expect((await p.next(10)).map((t) => (JSON.parse(t) as { seq: number }).seq)).toEqual([
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
      ]);
      expect(p.conn.closed).toBe(false);
    } finally {
      await p.close();
    }
  });

  it('closes a connection already past the bound at its first message of a batch, with 4008', async () => {
    const p = await pair(64);
    try {
      const raw = (p.server as unknown as { _socket: { cork: () => void } })._socket;
      raw.cork(); // what ws has written stays in the socket's buffer: bufferedAmount grows
      p.conn.sendJson({ pad: 'y'.repeat(200) });
      expect(p.server.bufferedAmount).toBeGreaterThan(64);
      const batch = startBatch();
      p.conn.sendEvent('orderbook:m', new EventMessage('orderbook:m', 1, {}), batch);
      expect(p.conn.closed).toBe(true);
      expect(batch.connections).toHaveLength(0);
    } finally {
      await p.close();
    }
  });

  it('held frames leave before a direct message, an unbatched event and a close', async () => {
    const p = await pair();
    try {
      const batch = startBatch();
      p.conn.sendEvent('trades:m', new EventMessage('trades:m', 1, { n: 1 }), batch);
      p.conn.sendJson({ type: 'unsubscribed' }); // the held event was sent before it
      p.conn.sendEvent('trades:m', new EventMessage('trades:m', 2, { n: 2 }), batch);
      p.conn.sendEvent('trades:m', new EventMessage('trades:m', 3, { n: 3 })); // unbatched
      p.conn.sendEvent('trades:m', new EventMessage('trades:m', 4, { n: 4 }), batch);
      p.conn.close(1000, 'bye'); // before the batch is flushed
      flushBatch(batch);
      const got = (await p.next(5)).map((t) => JSON.parse(t) as Record<string, unknown>);
      expect(got.map((m) => m.seq ?? m.type)).toEqual([1, 'unsubscribed', 2, 3, 4]);
    } finally {
      await p.close();
    }
  });

  it('connections holding the same frames share one joined buffer', async () => {
    const p = await pair();
    const q = await pair();
    try {
      const writes: Buffer[] = [];
      for (const s of [p.server, q.server]) {
        const raw = (s as unknown as { _socket: { write: (b: Buffer) => boolean } })._socket;
        const write = raw.write.bind(raw);
        raw.write = (b: Buffer) => {
          writes.push(b);
          return write(b);
        };
      }
      const batch = startBatch();
      const messages = [1, 2, 3].map((i) => new EventMessage('orderbook:m', i, { i }));
      for (const m of messages) {
        p.conn.sendEvent('orderbook:m', m, batch);
        q.conn.sendEvent('orderbook:m', m, batch);
      }
      flushBatch(batch);
      expect(writes).toHaveLength(2);
      expect(writes[0]).toBe(writes[1]);
      for (const x of [p, q]) {
        const got = (await x.next(3)).map((t) => JSON.parse(t) as { seq: number; data: unknown });
        expect(got.map((m) => [m.seq, m.data])).toEqual([1, 2, 3].map((i) => [i, { i }]));
      }
    } finally {
      await p.close();
      await q.close();
    }
  });

  it('a slow consumer closed with held frames gets none of them', async () => {
    const p = await pair();
    try {
      const raw = (p.server as unknown as { _socket: { write: (b: Buffer) => boolean } })._socket;
      const write = jest.spyOn(raw, 'write');
      const batch = startBatch();
      p.conn.sendEvent('trades:m', new EventMessage('trades:m', 1, {}), batch);
      p.conn.close(4008, 'slow consumer');
      flushBatch(batch);
      // Only the close frame (opcode 8) is written, no text frame (opcode 1).
      const opcodes = write.mock.calls.map(([b]) => b[0] & 0x0f).filter((o) => o !== 0);
      expect(write).toHaveBeenCalled();
      expect(opcodes).not.toContain(1);
    } finally {
      await p.close();
    }
  });

  it('frameText gives back the text of every header form', () => {
    for (const size of [5, 126, 70_000]) {
      const text = 'z'.repeat(size);
      expect(frameText(textFrame(Buffer.from(text)))).toBe(text);
    }
  });

  it('stops writing once the socket is closing', async () => {
    const p = await pair();
    try {
      p.conn.close(4008, 'slow consumer');
      const raw = (p.server as unknown as { _socket: { write: () => boolean } })._socket;
      const write = jest.spyOn(raw, 'write');
      p.conn.sendEvent('trades:m', new EventMessage('trades:m', 1, {}));
      expect(write).not.toHaveBeenCalled();
    } finally {
      await p.close();
    }
  });

  it('bounds the bytes waiting to be handled: what would pass the limit is not counted', () => {
    const conn = new Connection(
      'c2',
      {} as never,
      '127.0.0.1',
      1024,
      new MessageBudget(20, 100, 0),
    );
    expect(conn.wait(600, 1000)).toBe(true);
    expect(conn.wait(400, 1000)).toBe(true);
    expect(conn.wait(1, 1000)).toBe(false);
    expect(conn.waitingBytes).toBe(1000);
    conn.handled(600);
    expect(conn.wait(500, 1000)).toBe(true);
    expect(conn.waitingBytes).toBe(900);
  });
});

describe('Feed: one seq counter per channel, each subscriber its own seq', () => {
  const seqs = async (x: { next: (n: number) => Promise<string[]> }, n: number) =>
    (await x.next(n)).map((t) => {
      const m = JSON.parse(t) as { seq: number; data: { i: number } };
      return [m.seq, m.data.i];
    });

  it('numbers each subscription from 1: a late joiner, a message to one alone, a resubscribe, a skipped seq', async () => {
    const p = await pair();
    const q = await pair();
    try {
      const feed = new Feed('orderbook:m');
      const m = (i: number) => new EventMessage('orderbook:m', i, { i });
      const ps = feed.join(p.conn);
      p.conn.subscriptions.set('orderbook:m', ps);
      sendToFeed(feed, m(1));
      sendToFeed(feed, m(2));
      // q joins after two messages: its snapshot (to q alone) is its seq 1, p's seq does not move.
      const qs = feed.join(q.conn);
      q.conn.subscriptions.set('orderbook:m', qs);
      q.conn.sendEvent('orderbook:m', m(10));
      const batch = startBatch();
      sendToFeed(feed, m(3), batch);
      sendToFeed(feed, m(4), batch);
      flushBatch(batch);
      expect(await seqs(p, 4)).toEqual([
        [1, 1],
        [2, 2],
        [3, 3],
        [4, 4],
      ]);
      expect(await seqs(q, 3)).toEqual([
        [1, 10],
        [2, 3],
        [3, 4],
      ]);
      expect([ps.seq, qs.seq]).toEqual([4, 3]);
      // p resubscribes (seq 0 again: its snapshot is 1); q loses one (its next shows the gap).
      ps.restart();
      p.conn.sendEvent('orderbook:m', m(20));
      qs.skip();
      sendToFeed(feed, m(5));
      expect((await seqs(p, 6)).slice(4)).toEqual([
        [1, 20],
        [2, 5],
      ]);
      expect((await seqs(q, 4)).slice(3)).toEqual([[5, 5]]);
      // A subscription that left hears no more; the others go on.
      ps.leave();
      sendToFeed(feed, m(6));
      expect((await seqs(q, 5)).slice(4)).toEqual([[6, 6]]);
      expect(p.received).toHaveLength(6);
      expect(feed.subscribers.size).toBe(1);
    } finally {
      await p.close();
      await q.close();
    }
  });
});
