import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClockOffsetStore } from '../common/clock/clock.js';
import { ConfigError } from './app-config.js';

const FILE = 'clock.json';

/**
 * Keeps the sandbox clock control's offset in DATA_DIR/clock.json, so a restart does not move
 * the service clock back (ids, and so keyset pages, sort by creation time). No file: no offset.
 */
export function fileClockOffset(dataDir: string): ClockOffsetStore {
  const path = join(dataDir, FILE);
  return {
    load(): number {
      if (!existsSync(path)) return 0;
      let offset: unknown;
      try {
        offset = (JSON.parse(readFileSync(path, 'utf8')) as { offset_ms?: unknown }).offset_ms;
      } catch {
        offset = undefined;
      }
      if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) {
        throw new ConfigError(
          'DATA_DIR',
          `holds a clock.json that is not {"offset_ms": <non-negative integer>} (${path}): restore it; removing it moves the service clock back to the wall clock`,
        );
      }
      return offset;
    },
    save(offsetMs: number): void {
      // Written whole, then renamed over the old one: a crash leaves one or the other.
      const tmp = `${path}.tmp`;
      writeFileSync(tmp, JSON.stringify({ offset_ms: offsetMs }) + '\n');
      renameSync(tmp, path);
    },
  };
}
