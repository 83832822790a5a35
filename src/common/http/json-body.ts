import type { FastifyInstance } from 'fastify';
import { DomainError, validationFailed } from '../errors/domain-error.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact request body bytes (request signing hashes them). */
    rawBody?: Buffer;
    /** A field error found while parsing, raised with validation (after authentication). */
    bodyIssue?: DomainError;
  }
}

/** No request body of this API nests deeper than a few levels; validators recurse per level. */
export const MAX_JSON_DEPTH = 32;

/**
 * True when the JSON text nests objects/arrays deeper than `max` (brackets inside strings do not
 * count). One pass over the bytes, before parsing: validation and transformation walk every level
 * recursively, and a few kilobytes of brackets would otherwise overflow the stack (a 500).
 */
export function nestedTooDeep(buf: Buffer, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * No request body of this API holds more than a few hundred values (a 20-leg batch, 100 ids to
 * cancel); validators and their error lists grow with every value, so a body of a few hundred
 * kilobytes of `{}` or of unknown keys would otherwise hold the event loop for seconds.
 */
export const MAX_JSON_VALUES = 2000;

/**
 * True when a parsed body holds more than `max` values. Containers are sized before their
 * children are visited, so an oversized body is refused after looking at its first level.
 */
export function tooManyValues(value: unknown, max = MAX_JSON_VALUES): boolean {
  let count = 1;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      count += v.length;
      if (count > max) return true;
      for (const c of v) if (c !== null && typeof c === 'object') stack.push(c);
    } else if (v !== null && typeof v === 'object') {
      const children = Object.values(v as Record<string, unknown>);
      count += children.length;
      if (count > max) return true;
      for (const c of children) if (c !== null && typeof c === 'object') stack.push(c);
    }
  }
  return false;
}

/** A \uD800-\uDFFF escape: the only way JSON text can carry a lone surrogate (raw bytes decode to U+FFFD). */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * The first string or key of a parsed body holding an unpaired UTF-16 surrogate, as a field path
 * (`orders[0].client_order_id`), or null. `text` is the JSON text: without a surrogate escape in
 * it (every ordinary body) nothing is walked.
 */
export function unpairedSurrogateField(text: string, value: unknown): string | null {
  if (!SURROGATE_ESCAPE.test(text)) return null;
  const wellFormed = (s: string): boolean =>
    (s as string & { isWellFormed(): boolean }).isWellFormed();
  const visit = (v: unknown, path: string): string | null => {
    if (typeof v === 'string') return wellFormed(v) ? null : path === '' ? 'body' : path;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const bad = visit(v[i], `${path}[${i}]`);
        if (bad !== null) return bad;
      }
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        const at = path === '' ? k : `${path}.${k}`;
        if (!wellFormed(k)) return at;
        const bad = visit(child, at);
        if (bad !== null) return bad;
      }
    }
    return null;
  };
  // Depth is at most MAX_JSON_DEPTH and the values at most MAX_JSON_VALUES (checked first).
  return visit(value, '');
}

/**
 * The API speaks JSON only: one parser for application/json (and +json types) that keeps the raw
 * bytes; any other body media type is refused by Fastify with 415. Prototype-poisoning keys
 * (`__proto__`, `constructor.prototype`) are detected as Fastify's default parser does and
 * refused as unknown fields (400 VALIDATION_FAILED).
 */
export function installJsonBodyParser(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  const parse = fastify.getDefaultJsonParser('error', 'error');
  fastify.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json(\s*;.*)?$/i,
    { parseAs: 'buffer' },
    (req, body, done) => {
      const buf = body as Buffer;
      req.rawBody = buf;
      if (buf.length === 0) {
        done(
          new DomainError('MALFORMED_JSON', 'Body is empty but Content-Type is application/json'),
          undefined,
        );
        return;
      }
      if (nestedTooDeep(buf, MAX_JSON_DEPTH)) {
        done(
          new DomainError(
            'MALFORMED_JSON',
            `Request body nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep`,
          ),
          undefined,
        );
        return;
      }
      const text = buf.toString('utf8');
      void parse(req, text, (err, value) => {
        if (err !== null) {
          // Valid JSON with a prototype-poisoning key: a field no operation takes, refused with
          // validation like any other unknown field; the parsed value is never handed on.
          // Read again without the poisoning check, capped as any body: only a failure.
          let plain: unknown;
          try {
            plain = JSON.parse(text);
          } catch {
            done(new DomainError('MALFORMED_JSON', 'Request body is not valid JSON'), undefined);
            return;
          }
          if (tooManyValues(plain)) {
            done(tooLarge(), undefined);
            return;
          }
          const field = poisoningKey(plain);
          if (field !== null) {
            req.bodyIssue = validationFailed([
              { field, message: `property ${field} should not exist` },
            ]);
            done(null, {});
            return;
          }
          done(new DomainError('MALFORMED_JSON', 'Request body is not valid JSON'), undefined);
          return;
        }
        if (tooManyValues(value)) {
          done(tooLarge(), undefined);
          return;
        }
        // A field error like any other: raised with validation, after the credential is checked.
        const field = unpairedSurrogateField(text, value);
        if (field !== null) {
          req.bodyIssue = validationFailed([
            {
              field,
              message:
                'holds an unpaired UTF-16 surrogate (\\uD800-\\uDFFF escape); send valid Unicode',
            },
          ]);
        }
        done(null, value);
      });
    },
  );
}

function tooLarge(): DomainError {
  return new DomainError(
    'PAYLOAD_TOO_LARGE',
    `Request body holds more than ${MAX_JSON_VALUES} values; no operation takes that many`,
    { max_values: MAX_JSON_VALUES },
  );
}

/**
 * The prototype-poisoning key (`__proto__`, or `constructor` holding `prototype`) of a value
 * JSON.parse made, at any depth; null if there is none. JSON.parse makes such keys plain own
 * properties, so reading them here is safe; the value is then dropped.
 */
export function poisoningKey(value: unknown): string | null {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Object.prototype.hasOwnProperty.call(v, '__proto__')) return '__proto__';
    const ctor = Object.prototype.hasOwnProperty.call(v, 'constructor')
      ? (v as Record<string, unknown>).constructor
      : undefined;
    if (
      ctor !== null &&
      typeof ctor === 'object' &&
      Object.prototype.hasOwnProperty.call(ctor, 'prototype')
    ) {
      return 'constructor';
    }
    for (const child of Object.values(v)) stack.push(child);
  }
  return null;
}
