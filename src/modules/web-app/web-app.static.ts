import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { DomainError } from '../../common/errors/domain-error.js';

/** Where `npm run build` puts the demo app: <repo>/dist/app (src/ and dist/ nest alike here). */
export const WEB_APP_DIR = fileURLToPath(new URL('../../../dist/app/', import.meta.url));

const PREFIX = '/app';

/**
 * The pages' headers: scripts, styles, images, fonts and connections (the API and its WebSocket)
 * from this origin only; no frames, no plugins, no inline code.
 */
export const WEB_APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function pageHeaders(reply: FastifyReply): void {
  reply
    .header('Content-Security-Policy', WEB_APP_CSP)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Frame-Options', 'DENY');
}

/**
 * GET /app: the demo web app, a single page built by Vite into dist/app. Its files are served
 * as they are (hashed assets cached for good); every other /app path is the page itself, so a
 * deep link such as /app/markets/mkt_x opens that view. When the build has not run, /app answers
 * 404 and the API runs on.
 */
export function registerWebApp(fastify: FastifyInstance, log: Logger, dir = WEB_APP_DIR): void {
  const indexFile = `${dir}index.html`;
  const built = existsSync(indexFile);
  if (!built) {
    log.warn({ dir }, 'the demo web app is not built (npm run build): /app answers 404');
  } else {
    void fastify.register(fastifyStatic, {
      root: dir,
      prefix: `${PREFIX}/`,
      // Routes for the files that exist, so any other /app path reaches the page fallback below.
      wildcard: false,
      index: false,
      decorateReply: false,
      // The global Cache-Control (no-store) stays on everything but the hashed assets.
      cacheControl: false,
      setHeaders: (res, path) => {
        res.header('Content-Security-Policy', WEB_APP_CSP);
        res.header('X-Content-Type-Options', 'nosniff');
        if (path.includes('/assets/')) {
          res.header('Cache-Control', 'public, max-age=31536000, immutable');
        }
      },
    });
  }
  // Read once: the page is a few hundred bytes and changes only with a new build (a restart).
  const index = built ? readFileSync(indexFile) : null;
  const page = async (req: { url: string }, reply: FastifyReply): Promise<void> => {
    const path = req.url.split('?')[0];
    // A missing script or stylesheet is a 404, never the page in its place.
    if (index === null || path.startsWith(`${PREFIX}/assets/`)) {
      throw new DomainError('NOT_FOUND', `No route GET ${path}`);
    }
    pageHeaders(reply);
    await reply.type('text/html; charset=utf-8').send(index);
  };
  fastify.get(PREFIX, page);
  fastify.get(`${PREFIX}/`, page);
  fastify.get(`${PREFIX}/*`, page);
}
