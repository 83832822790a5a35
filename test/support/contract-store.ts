// The OpenAPI document a boot builds, kept for the whole Jest run: the builder keeps it in its
// module's memory, but Jest gives each test file a fresh module registry, so without this every
// test file that boots the app generated it anew (about half a second of a first boot). The
// document depends only on the code, the staging URL and the controllers, which is the key, and
// the code does not change during a run. Files live beside the DATA_DIR templates (removed with
// them at the end of the run).
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ContractStore } from '../../src/modules/meta/openapi.builder.js';
import { TEMPLATE_ROOT_ENV } from './data-dir-template.js';

const memory = new Map<string, string>();

/** This run's store, or undefined outside a Jest run's global setup (each boot builds then). */
export function runContractStore(): ContractStore | undefined {
  const root = process.env[TEMPLATE_ROOT_ENV];
  if (root === undefined || root === '') return undefined;
  const file = (key: string) =>
    join(root, `openapi-${createHash('sha256').update(key).digest('hex').slice(0, 32)}.json`);
  return {
    get(key) {
      let json = memory.get(key);
      if (json !== undefined) return json;
      try {
        json = readFileSync(file(key), 'utf8');
      } catch {
        return undefined;
      }
      memory.set(key, json);
      return json;
    },
    set(key, json) {
      memory.set(key, json);
      // Written whole under another name, then renamed: a concurrent worker reads all or nothing.
      const tmp = `${file(key)}.${process.pid}.tmp`;
      writeFileSync(tmp, json);
      renameSync(tmp, file(key));
    },
  };
}
