import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { MAX_CLOCK_OFFSET_MS, type ClockOffsetStore } from '../common/clock/clock.js';
import { ConfigError } from './app-config.js';

/** DATA_DIR/clock.json, where the offset is kept. */
export function clockOffsetFile(dataDir: string): string {
  return join(dataDir, 'clock.json');
}

/**
 * Keeps the sandbox clock control's offset in DATA_DIR/clock.json, so a restart does not move
 * the service clock back (ids, and so keyset pages, sort by creation time). No file: no offset.
 * Used only while SANDBOX_CLOCK_CONTROL is on: without the control the service runs on the wall
 * clock, and a clock.json left in the data directory is ignored (with a warning at start).
 */
export function fileClockOffset(dataDir: string): ClockOffsetStore {
  const path = clockOffsetFile(dataDir);
  return {
    load(): number {
      if (!existsSync(path)) return 0;
      let offset: unknown;
      try {
        offset = (JSON.parse(readFileSync(path, 'utf8')) as { offset_ms?: unknown }).offset_ms;
      } catch {
        offset = undefined;
      }
      if (
        typeof offset !== 'number' ||
        !Number.isSafeInteger(offset) ||
        offset < 0 ||
        offset > MAX_CLOCK_OFFSET_MS
      ) {
        throw new ConfigError(
          'DATA_DIR',
          `holds a clock.json that is not {"offset_ms": <integer 0..${MAX_CLOCK_OFFSET_MS}>} (${path}): restore it; removing it moves the service clock back to the wall clock`,
        );
      }
      return offset;
    },
    save(offsetMs: number): void {
      // Written whole and synced, then renamed over the old one: a crash or a power loss leaves
      // one or the other, never an empty file.
      const tmp = `${path}.tmp`;
      const fd = openSync(tmp, 'w');
      try {
        writeSync(fd, JSON.stringify({ offset_ms: offsetMs }) + '\n');
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, path);
    },
  };
}
