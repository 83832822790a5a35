import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureSecrets } from './secrets.js';

const NONE = { jwtSecret: null, encryptionKey: null };

describe('ensureSecrets', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-secrets-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('generates the secrets on first start into DATA_DIR/secrets.json with mode 0600', () => {
    const dataDir = join(dir, 'nested', 'data');
    const s = ensureSecrets(dataDir, NONE);
    expect(s.jwtSecret.length).toBeGreaterThanOrEqual(32);
    expect(s.encryptionKey).toMatch(/^[0-9a-f]{64}$/);
    const file = join(dataDir, 'secrets.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(s);
  });

  it('reuses the stored secrets on the next start', () => {
    const first = ensureSecrets(dir, NONE);
    const before = readFileSync(join(dir, 'secrets.json'), 'utf8');
    expect(ensureSecrets(dir, NONE)).toEqual(first);
    expect(readFileSync(join(dir, 'secrets.json'), 'utf8')).toBe(before);
  });

  it('tightens the permissions of an existing file', () => {
    const first = ensureSecrets(dir, NONE);
    writeFileSync(join(dir, 'secrets.json'), JSON.stringify(first), { mode: 0o644 });
    expect(ensureSecrets(dir, NONE)).toEqual(first);
    expect(statSync(join(dir, 'secrets.json')).mode & 0o777).toBe(0o600);
  });

  it('uses operator-given secrets and never writes them to disk', () => {
    const given = { jwtSecret: 'j'.repeat(40), encryptionKey: 'ab'.repeat(32) };
    expect(ensureSecrets(dir, given)).toEqual(given);
    expect(existsSync(join(dir, 'secrets.json'))).toBe(false);

    const half = ensureSecrets(dir, { jwtSecret: given.jwtSecret, encryptionKey: null });
    expect(half.jwtSecret).toBe(given.jwtSecret);
    const stored = JSON.parse(readFileSync(join(dir, 'secrets.json'), 'utf8'));
    expect(stored).toEqual({ encryptionKey: half.encryptionKey });
    expect(readFileSync(join(dir, 'secrets.json'), 'utf8')).not.toContain(given.jwtSecret);
  });
});

describe('ensureSecrets: what it keeps and what it refuses', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-secrets-keep-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const KEY = 'b'.repeat(64);

  it('an operator-given key never erases the generated one kept in secrets.json', () => {
    const generated = ensureSecrets(dir, NONE);
    // One start with SECRETS_ENCRYPTION_KEY set uses it, and keeps the file as it was...
    expect(ensureSecrets(dir, { jwtSecret: null, encryptionKey: KEY }).encryptionKey).toBe(KEY);
    expect(JSON.parse(readFileSync(join(dir, 'secrets.json'), 'utf8'))).toEqual(generated);
    // ...so the next start without it is back on the key that sealed the stored secrets.
    expect(ensureSecrets(dir, NONE)).toEqual(generated);
  });

  it('databases without secrets.json stop the boot, unless the key is given', () => {
    ensureSecrets(dir, NONE);
    writeFileSync(join(dir, 'platform.sqlite'), '');
    rmSync(join(dir, 'secrets.json'));
    expect(() => ensureSecrets(dir, NONE)).toThrow(
      /DATA_DIR holds databases but no encryption key .*restore secrets\.json, or set SECRETS_ENCRYPTION_KEY/,
    );
    expect(existsSync(join(dir, 'secrets.json'))).toBe(false);
    expect(ensureSecrets(dir, { jwtSecret: null, encryptionKey: KEY }).encryptionKey).toBe(KEY);
    // The generated session key is kept; the given encryption key is not written down.
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'secrets.json'), 'utf8')))).toEqual([
      'jwtSecret',
    ]);
  });

  it('a secrets.json it cannot write is a configuration error naming DATA_DIR', () => {
    // A link to a place that does not exist: nothing to read, and the write fails (root writes
    // through permissions, so a read-only directory would not do here).
    symlinkSync(join(dir, 'missing', 'secrets.json'), join(dir, 'secrets.json'));
    expect(() => ensureSecrets(dir, NONE)).toThrow(/DATA_DIR cannot be written \(ENOENT/);
  });
});
