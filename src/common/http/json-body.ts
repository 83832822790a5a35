import type { FastifyInstance } from 'fastify';
import { DomainError } from '../errors/domain-error.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact request body bytes (request signing hashes them). */
    rawBody?: Buffer;
  }
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
