import type { FastifyInstance } from 'fastify';
import { DomainError } from '../errors/domain-error.js';

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
        done(null, value);
      });
    },
  );
}
