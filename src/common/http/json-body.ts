import type { FastifyInstance } from 'fastify';
import { DomainError, validationFailed } from '../errors/domain-error.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact request body bytes (request signing hashes them). */
    rawBody?: Buffer;
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

/** What is wrong with a parsed body that JSON itself allows, or null. */
export function bodyProblem(value: unknown): DomainError | null {
  let count = 0;
  let bad: string | null = null;
  const wellFormed = (s: string): boolean =>
    (s as string & { isWellFormed(): boolean }).isWellFormed();
  // Iterative, depth-first; `path` is built only for the (rare) report.
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (++count > MAX_JSON_VALUES) {
      return new DomainError(
        'PAYLOAD_TOO_LARGE',
        `Request body holds more than ${MAX_JSON_VALUES} values; no operation takes that many`,
        { max_values: MAX_JSON_VALUES },
      );
    }
    if (typeof v === 'string') {
      if (bad === null && !wellFormed(v)) bad = path === '' ? 'body' : path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        const at = path === '' ? k : `${path}.${k}`;
        if (bad === null && !wellFormed(k)) bad = at;
        stack.push([child, at]);
      }
    }
  }
  if (bad !== null) {
    return validationFailed([
      {
        field: bad,
        message: 'holds an unpaired UTF-16 surrogate (\\uD800-\\uDFFF escape); send valid Unicode',
      },
    ]);
  }
  return null;
}

/**
 * The API speaks JSON only: one parser for application/json (and +json types) that keeps the raw
 * bytes; any other body media type is refused by Fastify with 415. Prototype-poisoning keys are
 * refused the way Fastify's default parser refuses them.
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
      void parse(req, buf.toString('utf8'), (err, value) => {
        if (err !== null) {
          done(new DomainError('MALFORMED_JSON', 'Request body is not valid JSON'), undefined);
          return;
        }
        const problem = bodyProblem(value);
        if (problem !== null) {
          done(problem, undefined);
          return;
        }
        done(null, value);
      });
    },
  );
}
