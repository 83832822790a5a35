import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './app-config.js';

/** Secrets the service needs at run time. */
export interface ServiceSecrets {
  /** HMAC key that signs first-party session JWTs. */
  jwtSecret: string;
  /** 32-byte AES-256-GCM key (hex) that encrypts stored secrets (signing and webhook secrets). */
  encryptionKey: string;
}

const FILE = 'secrets.json';

/**
 * Returns the service secrets: the operator's values when given, otherwise the ones kept in
 * DATA_DIR/secrets.json, generated on first start with permissions 0600.
 */
export function ensureSecrets(
  dataDir: string,
  given: { jwtSecret: string | null; encryptionKey: string | null },
): ServiceSecrets {
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (err) {
    throw new ConfigError(
      'DATA_DIR',
      `cannot be used as the data directory (${(err as NodeJS.ErrnoException).code ?? 'error'}: ${dataDir})`,
    );
  }
  const path = join(dataDir, FILE);
  let stored: Partial<ServiceSecrets> = {};
  if (existsSync(path)) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        throw new Error('not a JSON object');
      }
      stored = parsed as Partial<ServiceSecrets>;
    } catch {
      throw new ConfigError(
        'DATA_DIR',
        `holds a secrets.json that is not a JSON object of secrets (${path}): restore it, or remove it to generate new secrets (stored signing and webhook secrets then become unreadable)`,
      );
    }
  }
  // Databases without the key that sealed their secrets: generating a new one would leave every
  // stored signing and webhook secret unreadable (500s on signed requests, failed deliveries).
  if (
    given.encryptionKey === null &&
    stored.encryptionKey === undefined &&
    existsSync(join(dataDir, 'platform.sqlite'))
  ) {
    throw new ConfigError(
      'DATA_DIR',
      `holds databases but no encryption key (${path} is missing it): restore secrets.json, or set SECRETS_ENCRYPTION_KEY to the key that encrypted them`,
    );
  }
  const secrets: ServiceSecrets = {
    jwtSecret: given.jwtSecret ?? stored.jwtSecret ?? randomBytes(48).toString('base64url'),
    encryptionKey: given.encryptionKey ?? stored.encryptionKey ?? randomBytes(32).toString('hex'),
  };
  // Generated values are kept; operator-given values stay with the operator and never replace
  // (or erase) a generated one kept here: unsetting the variable later brings it back.
  const toStore: Partial<ServiceSecrets> = { ...stored };
  if (given.jwtSecret === null) toStore.jwtSecret = secrets.jwtSecret;
  if (given.encryptionKey === null) toStore.encryptionKey = secrets.encryptionKey;
  const needsWrite =
    toStore.jwtSecret !== stored.jwtSecret || toStore.encryptionKey !== stored.encryptionKey;
  try {
    if (needsWrite) writeFileSync(path, JSON.stringify(toStore, null, 2), { mode: 0o600 });
    if (existsSync(path)) chmodSync(path, 0o600);
  } catch (err) {
    throw new ConfigError(
      'DATA_DIR',
      `cannot be written (${(err as NodeJS.ErrnoException).code ?? 'error'}: ${path})`,
    );
  }
  return secrets;
}
