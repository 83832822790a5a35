import { readFileSync } from 'node:fs';

/** A JSON file of seeds/ (the demo markets, accounts, crypto walk parameters). */
export function readSeed<T>(file: string): T {
  // seeds/ sits at the project root, two levels above both src/database and dist/database.
  return JSON.parse(readFileSync(new URL(`../../seeds/${file}`, import.meta.url), 'utf8')) as T;
}
