import { describe, expect, it } from '@jest/globals';
import { ConfigError, DEFAULT_PASSWORD_SCRYPT_COST, loadConfig } from './app-config.js';

function refusal(env: Record<string, string>): ConfigError {
  let caught: unknown;
  try {
    loadConfig(env);
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  expect((caught as ConfigError).variable).toBe('PASSWORD_SCRYPT_COST');
  return caught as ConfigError;
}

describe('PASSWORD_SCRYPT_COST', () => {
  it('defaults to 32768 (2^15) on every APP_ENV, blank included', () => {
    expect(DEFAULT_PASSWORD_SCRYPT_COST).toBe(32_768);
    for (const APP_ENV of ['development', 'staging', 'production']) {
      expect(loadConfig({ APP_ENV }).passwordScryptCost).toBe(32_768);
      expect(loadConfig({ APP_ENV, PASSWORD_SCRYPT_COST: ' ' }).passwordScryptCost).toBe(32_768);
    }
  });

  it('accepts every power of two from 1024 to 1048576', () => {
    for (let n = 1024; n <= 1_048_576; n *= 2) {
      expect(loadConfig({ PASSWORD_SCRYPT_COST: String(n) }).passwordScryptCost).toBe(n);
    }
  });

  it('refuses values outside 1024..1048576, non-integers and non-powers of two', () => {
    expect(refusal({ PASSWORD_SCRYPT_COST: '512' }).message).toContain(
      'must be between 1024 and 1048576, got 512',
    );
    refusal({ PASSWORD_SCRYPT_COST: '2097152' });
    refusal({ PASSWORD_SCRYPT_COST: '0' });
    refusal({ PASSWORD_SCRYPT_COST: '-1024' });
    refusal({ PASSWORD_SCRYPT_COST: '16384.0' });
    refusal({ PASSWORD_SCRYPT_COST: 'high' });
    for (const v of ['1025', '3072', '49152', '1048575']) {
      expect(refusal({ PASSWORD_SCRYPT_COST: v }).message).toContain('must be a power of two');
    }
  });

  it('refuses a cost below 32768 on production, allows it elsewhere and allows more anywhere', () => {
    for (const v of ['1024', '16384']) {
      expect(refusal({ APP_ENV: 'production', PASSWORD_SCRYPT_COST: v }).message).toContain(
        `must be at least 32768 when APP_ENV is production, got ${v}`,
      );
      expect(loadConfig({ APP_ENV: 'staging', PASSWORD_SCRYPT_COST: v }).passwordScryptCost).toBe(
        Number(v),
      );
    }
    expect(
      loadConfig({ APP_ENV: 'production', PASSWORD_SCRYPT_COST: '65536' }).passwordScryptCost,
    ).toBe(65_536);
  });
});
