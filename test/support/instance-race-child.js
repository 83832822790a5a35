// A host of service instances for the instance-race tests (src/modules/access/instance-races.spec.ts):
// a separate process with its own connections to the shared database, running the compiled
// service classes (dist/, or RACE_DIST's) the way the app wires them. It loads each class once
// (when an instance first uses it) and runs one instance after another, each with connections
// and services of its own: it reads `job <JSON>` on stdin, boots the instance, prints `ready`,
// waits for `go`, fires its operations all at once, prints one JSON line of outcomes, closes the
// instance (with `hold`: after `exit` on stdin, its claims left running until then) and prints
// `done`. `quit` or the end of stdin ends the process. A host runs one instance at a time, so
// instances racing each other are always different processes.
//
// job: { op, db: { url } | { dir }, nowMs, env?, ...op's own fields }
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = process.env.RACE_DIST ?? fileURLToPath(new URL('../../dist', import.meta.url));
const load = (path) => import(pathToFileURL(join(dist, path)).href);

const { DataSource } = await import('typeorm');
const databases = await load('database/databases.js');
const { ManualClock } = await load('common/clock/clock.js');
const { ConfigService } = await load('config/config.service.js');
const { loadConfig } = await load('config/app-config.js');
const { UsersService } = await load('modules/users/users.service.js');

const lines = createInterface({ input: process.stdin });
const waiting = [];
const early = [];
let ended = false;
lines.on('line', (line) => {
  const waiter = waiting.shift();
  if (waiter !== undefined) waiter(line.trim());
  else early.push(line.trim());
});
lines.on('close', () => {
  ended = true;
  for (const waiter of waiting.splice(0)) waiter('quit');
});
const next = () =>
  new Promise((resolve) => {
    if (early.length > 0) resolve(early.shift());
    else if (ended) resolve('quit');
    else waiting.push(resolve);
  });

function source(job, name, entities, migrations) {
  const options =
    job.db.url !== undefined
      ? databases.postgresOptions(name, job.db.url, entities, migrations)
      : databases.sqliteOptions(name, job.db.dir, entities, migrations);
  // The test migrated the schema before starting the instances.
  return new DataSource({ ...options, migrationsRun: false });
}

/** One instance: the job's database connections and services; `closers` close it. */
async function boot(job, closers) {
  const platform = source(
    job,
    'platform',
    databases.PLATFORM_ENTITIES,
    databases.PLATFORM_MIGRATIONS,
  );
  await platform.initialize();
  closers.unshift(() => platform.destroy());
  const clock = new ManualClock(job.nowMs);
  const env = job.db.url !== undefined ? { DATABASE_URL: job.db.url } : {};
  const config = new ConfigService(loadConfig({ ...env, ...(job.env ?? {}) }), {
    jwtSecret: 'x'.repeat(32),
    encryptionKey: '0'.repeat(64),
  });
  const users = new UsersService(platform, config);
  return { job, closers, platform, clock, config, users };
}

/** What an operation came to: 'ok' (or what it answered), or the DomainError code it threw. */
async function outcome(run) {
  try {
    return await run();
  } catch (err) {
    if (typeof err?.code === 'string' && err.constructor?.name === 'DomainError') return err.code;
    return `error: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** `op` -> the operations it fires at once. */
async function operations(instance) {
  const { job, platform, clock, config, users } = instance;
  // Each operation's classes are loaded when first used (an older RACE_DIST build may lack
  // another operation's); the process's module cache keeps them for its next instances.
  if (job.op === 'mfa-step-up') {
    const { MfaService } = await load('modules/security/mfa.service.js');
    const mfa = new MfaService(users, clock, config, platform);
    const credential = { userId: job.userId, keyId: job.keyId ?? null };
    return job.codes.map(
      (code) => () => outcome(async () => (await mfa.stepUp(credential, code), 'ok')),
    );
  }
  if (job.op === 'api-key-create') {
    const { ApiKeysService } = await load('modules/api-keys/api-keys.service.js');
    const { ApiKeyRepository } = await load('modules/api-keys/api-key.repository.js');
    const { IdGenerator } = await load('common/ids/id-generator.js');
    const signals = { cacheTtlMs: undefined, on: () => undefined, publish: () => undefined };
    const keys = new ApiKeyRepository(platform, config, signals);
    const terms = { assertAccepted: async () => undefined };
    const mail = { send: async () => undefined };
    const svc = new ApiKeysService(
      keys,
      platform,
      users,
      terms,
      mail,
      config,
      clock,
      new IdGenerator(),
      { notify: () => undefined },
    );
    return Array.from(
      { length: job.count },
      (_, i) => () =>
        outcome(async () => {
          await svc.create(job.userId, {
            name: `race ${process.pid} ${i}`,
            environment: 'live',
          });
          return 'ok';
        }),
    );
  }
  if (job.op === 'idempotent-request') {
    const svc = await idempotency(instance);
    return Array.from(
      { length: job.count },
      () => () =>
        outcome(async () => {
          const req = request(job.userId, job.key);
          const reply = fakeReply();
          if (await svc.begin(req, reply)) return `replayed ${reply.statusCode}`;
          // Ran: the answer is stored after a moment of "work", as onSend would.
          await new Promise((r) => setTimeout(r, job.workMs ?? 20));
          reply.statusCode = 201;
          await svc.finish(req, reply, '{"ran":true}');
          return 'ran';
        }),
    );
  }
  if (job.op === 'idempotent-claim') {
    // Claims the key and keeps it running (no answer stored) until the instance is closed.
    const svc = await idempotency(instance);
    return [
      () =>
        outcome(async () =>
          (await svc.begin(request(job.userId, job.key), fakeReply())) ? 'replayed' : 'claimed',
        ),
    ];
  }
  throw new Error(`unknown op ${job.op}`);
}

/** The idempotency service over the shared platform and engine databases, booted as the app does. */
async function idempotency({ job, platform, clock, config, closers }) {
  const { IdempotencyService } = await load('modules/access/idempotency.service.js');
  const { WorldDatabases } = await load('modules/worlds/world-databases.service.js');
  const live = source(job, 'live', databases.ENGINE_ENTITIES, databases.ENGINE_MIGRATIONS);
  const paper = source(job, 'paper', databases.ENGINE_ENTITIES, databases.ENGINE_MIGRATIONS);
  await live.initialize();
  await paper.initialize();
  closers.unshift(
    () => live.destroy(),
    () => paper.destroy(),
  );
  const worlds = new WorldDatabases(live, paper, {});
  const svc = new IdempotencyService(platform, clock, config, worlds, { for: () => clock });
  closers.unshift(async () => svc.onApplicationShutdown());
  await svc.onApplicationBootstrap();
  return svc;
}

function request(userId, key) {
  return {
    id: `req_${process.pid}_${Math.random()}`,
    method: 'POST',
    url: '/api/v1/orders',
    headers: { 'idempotency-key': key },
    raw: { rawHeaders: ['Idempotency-Key', key] },
    rawBody: Buffer.from('{"quantity":1}'),
    svc: { userId, world: 'test', environment: 'test', credential: null },
  };
}

function fakeReply() {
  const reply = {
    statusCode: 200,
    headers: {},
    code(c) {
      reply.statusCode = c;
      return reply;
    },
    header(k, v) {
      reply.headers[k.toLowerCase()] = v;
      return reply;
    },
    type(t) {
      reply.headers['content-type'] = t;
      return reply;
    },
    getHeader: (k) => reply.headers[k.toLowerCase()],
    send: () => reply,
  };
  return reply;
}

for (let line = await next(); line.startsWith('job '); line = await next()) {
  const job = JSON.parse(line.slice('job '.length));
  const closers = [];
  const ops = await operations(await boot(job, closers));
  process.stdout.write('ready\n');
  if ((await next()) !== 'go') process.exit(2);
  const outcomes = await Promise.all(ops.map((op) => op()));
  process.stdout.write(`${JSON.stringify(outcomes)}\n`);
  if (job.hold === true) await next();
  for (const close of closers) await close();
  process.stdout.write('done\n');
}
lines.close();
