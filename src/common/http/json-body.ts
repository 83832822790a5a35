import type { FastifyInstance } from 'fastify';
import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders } from 'node:http';
import { DomainError, validationFailed } from '../errors/domain-error.js';
import { JSON_ONLY } from '../errors/error-mapper.js';

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
  // Each level opens with a bracket byte: a body with at most `max` of them (an order has one)
  // cannot nest deeper, and native searches count them without walking every byte in JS.
  if (bracketsAtMost(buf, max)) return false;
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

/** Whether `buf` holds at most `max` opening brackets (`{` or `[`, inside strings too). */
function bracketsAtMost(buf: Buffer, max: number): boolean {
  let n = 0;
  for (const bracket of [0x7b, 0x5b]) {
    for (let i = buf.indexOf(bracket); i !== -1; i = buf.indexOf(bracket, i + 1)) {
      if (++n > max) return false;
    }
  }
  return true;
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
 * What the body's headers say that makes it unreadable here, or null: a Content-Encoding (the
 * body arrives compressed: 415 naming the one accepted, RFC 9110 15.5.16), a charset other than
 * UTF-8 (RFC 8259 8.1: JSON is UTF-8; its bytes would be misread), or a transfer coding besides
 * chunked (Node's parser takes `gzip, chunked` and hands on the compressed bytes).
 */
export function unreadableBody(headers: IncomingHttpHeaders): DomainError | null {
  const encoding = headers['content-encoding']?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    return new DomainError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content-Encoding ${encoding.slice(0, 40)} is not supported: send the body uncompressed`,
      { accepted_encodings: ['identity'] },
      { 'Accept-Encoding': 'identity' },
    );
  }
  const charset = CHARSET.exec(headers['content-type'] ?? '')?.[1];
  if (charset !== undefined && !/^(?:utf-?8|us-ascii)$/i.test(charset)) {
    return new DomainError(
      'UNSUPPORTED_MEDIA_TYPE',
      `charset ${charset.slice(0, 40)} is not supported: send JSON in UTF-8 (Content-Type: application/json)`,
      { ...JSON_ONLY.details },
      { ...JSON_ONLY.headers },
    );
  }
  const te = headers['transfer-encoding'];
  if (te !== undefined && te.split(',').some((t) => t.trim().toLowerCase() !== 'chunked')) {
    return new DomainError(
      'BAD_REQUEST',
      `Transfer-Encoding ${te.slice(0, 40)} is not supported: send the body chunked or with a Content-Length`,
    );
  }
  return null;
}

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;

/**
 * Whether a request carries no body: neither a length above zero nor a transfer coding. Such a
 * request has nothing to parse, whatever media type it names: fetch sends `text/plain` with an
 * empty body, curl -d '' a form type, and many SDKs `application/json` on every request.
 */
export function hasNoBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}

/**
 * The API speaks JSON only: one parser for application/json that keeps the raw bytes; any other
 * body media type is refused by Fastify with 415, as are other charsets and content codings
 * ({@link unreadableBody}). A body that is not UTF-8 is MALFORMED_JSON (its bytes used to become
 * U+FFFD and be stored so). An empty body is no body. Prototype-poisoning keys (`__proto__`,
 * `constructor.prototype`) are detected as Fastify's default parser does and refused as unknown
 * fields (400 VALIDATION_FAILED).
 */
export function installJsonBodyParser(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  const parse = fastify.getDefaultJsonParser('error', 'error');
  fastify.addContentTypeParser(
    /^application\/json(\s*;.*)?$/i,
    { parseAs: 'buffer' },
    (req, body, done) => {
      const buf = body as Buffer;
      req.rawBody = buf;
      if (buf.length === 0) {
        done(null, undefined);
        return;
      }
      const unreadable = unreadableBody(req.headers);
      if (unreadable !== null) {
        done(unreadable, undefined);
        return;
      }
      if (!isUtf8(buf)) {
        done(
          new DomainError(
            'MALFORMED_JSON',
            'Request body is not valid UTF-8 (RFC 8259: JSON is UTF-8)',
          ),
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
        // Every value takes at least one byte of the text: a shorter body cannot hold too many.
        if (buf.length > MAX_JSON_VALUES && tooManyValues(value)) {
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
                'must not hold an unpaired UTF-16 surrogate (\\uD800-\\uDFFF escape); send valid Unicode',
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
