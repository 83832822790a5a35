import { randomBytes } from 'node:crypto';

/** What a username may be: 3..30 of lower-case letters, digits and underscores. */
export const USERNAME_PATTERN = /^[a-z0-9_]{3,30}$/;

/**
 * Account ids start with this, and GET /users/{id_or_username} matches an id before a username:
 * a username starting with it could stand for another account, so none may.
 */
export const RESERVED_USERNAME_PREFIX = 'usr_';

/** How many generated names are drawn before giving up (8 random hex digits rarely collide). */
export const USERNAME_ATTEMPTS = 20;

/** A source of random bytes (node:crypto's randomBytes; tests pass a fixed one). */
export type RandomBytes = (size: number) => Buffer;

/**
 * A generated username: `user_` and 8 random lower-case hex digits, e.g. `user_4f2a9c1e`. It
 * is derived from nothing about the account, so a public profile, a comment's author or a
 * leaderboard row never shows any part of the email.
 */
export function generatedUsername(random: RandomBytes = randomBytes): string {
  return `user_${random(4).toString('hex')}`;
}

/** No free username was found in USERNAME_ATTEMPTS draws. */
export class NoFreeUsernameError extends Error {
  constructor() {
    super(`No free username found in ${USERNAME_ATTEMPTS} attempts`);
    this.name = 'NoFreeUsernameError';
  }
}

/**
 * The first generated username `isTaken` says is free, drawing at most USERNAME_ATTEMPTS names;
 * throws NoFreeUsernameError after that rather than looping forever.
 */
export async function freeGeneratedUsername(
  isTaken: (name: string) => boolean | Promise<boolean>,
  random: RandomBytes = randomBytes,
): Promise<string> {
  for (let i = 0; i < USERNAME_ATTEMPTS; i++) {
    const name = generatedUsername(random);
    if (!(await isTaken(name))) return name;
  }
  throw new NoFreeUsernameError();
}
