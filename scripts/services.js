#!/usr/bin/env node
// npm run services: a throwaway local PostgreSQL cluster and redis-server (Debian's packages) for
// running the service against DATABASE_URL and REDIS_URL. Prints both URLs, then runs until
// Ctrl-C or SIGTERM, which stops both servers and removes every file they wrote.
//
// --initdb-cache <dir> (the tests': one directory for a Jest run): the cluster is a copy of an
// initdb'd data directory kept there (made by the first start that finds none), instead of an
// initdb of its own each start; each copy gets its own superuser password when it starts.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const DATABASE = 'sandbox';
const asRoot = process.getuid?.() === 0;
const cacheAt = process.argv.indexOf('--initdb-cache');
const initdbCache = cacheAt > 0 ? process.argv[cacheAt + 1] : undefined;

/** initdb and pg_ctl: Debian keeps them in /usr/lib/postgresql/<version>/bin, off the PATH. */
function pgBin(name) {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', name)))
      .sort((a, b) => Number(b) - Number(a));
    if (versions.length > 0) return join(root, versions[0], 'bin', name);
  }
  return name;
}

/** PostgreSQL refuses to run as root: as root, its commands run as the `postgres` user. */
function asPostgres(cmd, args) {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

function run(cmd, args) {
  const [c, a] = asPostgres(cmd, args);
  const r = spawnSync(c, a, { encoding: 'utf8' });
  if (r.error !== undefined) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function redisAnswers(port) {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.setTimeout(500, () => (s.destroy(), resolve(false)));
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (d) => (s.destroy(), resolve(d.toString().startsWith('+PONG'))));
    s.on('error', () => resolve(false));
  });
}

const dir = mkdtempSync(join(tmpdir(), 'svc-services-'));
const pgData = join(dir, 'pg');
let redis = null;
let pgStarted = false;
let stopping = false;

function stop(code) {
  if (stopping) return;
  stopping = true;
  if (pgStarted) {
    try {
      run(pgBin('pg_ctl'), ['stop', '-D', pgData, '-m', 'fast', '-w', '-t', '30']);
    } catch (err) {
      console.error(`stopping PostgreSQL: ${err.message}`);
    }
  }
  const done = () => {
    rmSync(dir, { recursive: true, force: true });
    console.error('services stopped');
    process.exit(code);
  };
  if (redis !== null && redis.exitCode === null && redis.signalCode === null) {
    redis.once('exit', done);
    redis.kill('SIGTERM');
  } else done();
}

process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

try {
  if (asRoot) chownSync(dir, pgUid(), pgGid());
  const password = randomBytes(18).toString('base64url');
  // The password the cluster starts with: a copied one's is the cached directory's, changed
  // to `password` once it runs.
  const initial = initCluster(password);
  const pgPort = await freePort();
  // Loopback only, the socket in the temporary directory; fsync off: nothing here must survive.
  // 300 connections: one cluster serves a whole `npm run test:pg` (two Jest workers, several apps each).
  const opts = `-p ${pgPort} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300`;
  run(pgBin('pg_ctl'), [
    'start',
    '-D',
    pgData,
    '-w',
    '-t',
    '60',
    '-l',
    join(dir, 'pg.log'),
    '-o',
    opts,
  ]);
  pgStarted = true;
  const admin = new pg.Client({
    host: '127.0.0.1',
    port: pgPort,
    user: 'postgres',
    password: initial,
    database: 'postgres',
  });
  await admin.connect();
  if (initial !== password) {
    await admin.query(`ALTER ROLE postgres PASSWORD '${password}'`);
  }
  await admin.query(`CREATE DATABASE ${DATABASE}`);
  await admin.end();

  const redisPort = await freePort();
  redis = spawn(
    'redis-server',
    [
      '--port',
      String(redisPort),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  redis.once('exit', (code, signal) => {
    if (!stopping) {
      console.error(`redis-server exited (${signal ?? code}); stopping`);
      stop(1);
    }
  });
  const deadline = Date.now() + 10_000;
  while (!(await redisAnswers(redisPort))) {
    if (Date.now() > deadline) throw new Error('redis-server did not answer within 10 s');
    await new Promise((r) => setTimeout(r, 50));
  }

  const user = encodeURIComponent('postgres');
  console.log(`DATABASE_URL=postgres://${user}:${password}@127.0.0.1:${pgPort}/${DATABASE}`);
  console.log(`REDIS_URL=redis://127.0.0.1:${redisPort}`);
  console.error(
    `PostgreSQL and Redis are running (files in ${dir}); Ctrl-C stops both and removes them.`,
  );
} catch (err) {
  console.error(`npm run services: ${err.message}`);
  stop(1);
}

/**
 * Makes the cluster's data directory: initdb, or a copy of the one kept in --initdb-cache
 * (`cp -a`: PostgreSQL wants its files its own, mode 0700). Returns its superuser's password.
 */
function initCluster(password) {
  const cached = initdbCache === undefined ? undefined : join(initdbCache, 'pg-initdb');
  if (cached !== undefined && existsSync(join(cached, 'password'))) {
    const copied = spawnSync('cp', ['-a', join(cached, 'data'), pgData], { encoding: 'utf8' });
    if (copied.status === 0) return readFileSync(join(cached, 'password'), 'utf8').trim();
    rmSync(pgData, { recursive: true, force: true });
  }
  const pwfile = join(dir, 'pwfile');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (asRoot) chownSync(pwfile, pgUid(), pgGid());
  // --no-sync: a throwaway cluster (fsync is off once it runs, too).
  run(pgBin('initdb'), [
    '-D',
    pgData,
    '-U',
    'postgres',
    '--auth=scram-sha-256',
    `--pwfile=${pwfile}`,
    '--encoding=UTF8',
    '--locale=C',
    '--no-sync',
  ]);
  rmSync(pwfile);
  if (cached !== undefined) keepCluster(cached, password);
  return password;
}

/** Keeps a copy of the new, never started data directory as `cached` (whole, or not at all). */
function keepCluster(cached, password) {
  try {
    const scratch = mkdtempSync(join(initdbCache, 'pg-initdb-'));
    const copied = spawnSync('cp', ['-a', pgData, join(scratch, 'data')], { encoding: 'utf8' });
    if (copied.status !== 0) {
      rmSync(scratch, { recursive: true, force: true });
      return;
    }
    writeFileSync(join(scratch, 'password'), `${password}\n`, { mode: 0o600 });
    try {
      renameSync(scratch, cached);
    } catch {
      // Another start kept its copy first.
      rmSync(scratch, { recursive: true, force: true });
    }
  } catch (err) {
    console.error(`keeping the initdb copy: ${err.message}`);
  }
}

function pgUid() {
  return Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
}
function pgGid() {
  return Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
}
