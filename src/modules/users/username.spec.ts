import { describe, expect, it } from '@jest/globals';
import {
  freeGeneratedUsername,
  generatedUsername,
  NoFreeUsernameError,
  RESERVED_USERNAME_PREFIX,
  USERNAME_ATTEMPTS,
  USERNAME_PATTERN,
} from './username.js';

/** A random source answering the given bytes, over and over. */
const fixed =
  (...bytes: number[]) =>
  (size: number): Buffer =>
    Buffer.from(Array.from({ length: size }, (_v, i) => bytes[i % bytes.length] ?? 0));

describe('generated usernames', () => {
  it('are user_ and 8 lower-case hex digits, valid and never an account id', () => {
    expect(generatedUsername(fixed(0x4f, 0x2a, 0x9c, 0x1e))).toBe('user_4f2a9c1e');
    for (let i = 0; i < 200; i++) {
      const name = generatedUsername();
      expect(name).toMatch(/^user_[0-9a-f]{8}$/);
      expect(name).toMatch(USERNAME_PATTERN);
      expect(name.startsWith(RESERVED_USERNAME_PREFIX)).toBe(false);
    }
  });

  it('answers the first name not taken', async () => {
    let n = 0;
    const counting = (size: number): Buffer => Buffer.alloc(size, n++);
    const taken = new Set(['user_00000000', 'user_01010101']);
    await expect(freeGeneratedUsername((name) => taken.has(name), counting)).resolves.toBe(
      'user_02020202',
    );
  });

  it('gives up with a clear error after USERNAME_ATTEMPTS draws instead of looping forever', async () => {
    const asked: string[] = [];
    const always = async (name: string): Promise<boolean> => {
      asked.push(name);
      return true;
    };
    await expect(freeGeneratedUsername(always, fixed(0xab))).rejects.toThrow(NoFreeUsernameError);
    expect(asked).toHaveLength(USERNAME_ATTEMPTS);
    expect(USERNAME_ATTEMPTS).toBe(20);
  });
});
