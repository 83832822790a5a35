import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppConfig } from '../../config/app-config.js';

/** The page of our own (HTML, its script and style), beside src/ and dist/ alike. */
const PAGE_DIR = fileURLToPath(new URL('../../../public/explorer/', import.meta.url));

/** swagger-ui-dist's files, served as they are packaged: no CDN. */
const SWAGGER_UI_DIR = dirname(
  createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'),
);

/** The only swagger-ui-dist files the page loads; the rest (its demo index, maps) stay unserved. */
const SWAGGER_UI_FILES = new Set([
  '/swagger-ui-bundle.js',
  '/swagger-ui.css',
  '/favicon-32x32.png',
  '/favicon-16x16.png',
]);

const PAGE_FILES = new Set(['/explorer.js', '/explorer.css']);

/**
 * The Explorer's own policy. swagger-ui renders with inline style attributes and data: images
 * (its icons), so styles allow 'unsafe-inline' and images data:; scripts come from this origin
 * only. Try-it calls go to this origin and to the staging server the document lists.
 */
export function explorerCsp(stagingBaseUrl: string): string {
  const staging = new URL(stagingBaseUrl).origin;
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self' ${staging}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function hardenAsset(reply: FastifyReply): void {
  reply
    .header('X-Content-Type-Options', 'nosniff')
    .header('Cross-Origin-Resource-Policy', 'same-origin');
}

/**
 * GET /explorer: the interactive API Explorer (CONTRACT.md "Browser pages"), swagger-ui reading
 * the served OpenAPI document, with try-it on this origin and test keys only. It is not served
 * with APP_ENV=production (404, as any unknown path): production cannot be called from it.
 * Registered on the root Fastify instance after the request hooks, so it meets the same per-IP
 * ceiling (category app-shell), ids and headers as every path.
 */
export function registerExplorer(fastify: FastifyInstance, config: AppConfig): void {
  if (config.appEnv === 'production') return;
  const html = readFileSync(`${PAGE_DIR}index.html`, 'utf8');
  const csp = explorerCsp(config.stagingBaseUrl);
  // Named for Fastify: a plugin without a display name is looked up among the exports of every
  // loaded module (require.cache, twice per boot), ~55 ms per boot under Jest's module registry.
  const explorer = async (scope: FastifyInstance): Promise<void> => {
    const page = async (_req: FastifyRequest, reply: FastifyReply): Promise<void> => {
      await reply
        .type('text/html; charset=utf-8')
        .header('Content-Security-Policy', csp)
        .header('X-Content-Type-Options', 'nosniff')
        .header('X-Frame-Options', 'DENY')
        .header('Referrer-Policy', 'no-referrer')
        .send(html);
    };
    scope.get('/explorer', page);
    scope.get('/explorer/', page);
    await scope.register(fastifyStatic, {
      root: SWAGGER_UI_DIR,
      prefix: '/explorer/ui/',
      decorateReply: false,
      index: false,
      allowedPath: (path) => SWAGGER_UI_FILES.has(path),
      setHeaders: hardenAsset,
    });
    await scope.register(fastifyStatic, {
      root: PAGE_DIR,
      prefix: '/explorer/page/',
      decorateReply: false,
      index: false,
      allowedPath: (path) => PAGE_FILES.has(path),
      setHeaders: hardenAsset,
    });
  };
  void fastify.register(
    Object.assign(explorer, { [Symbol.for('fastify.display-name')]: 'explorer' }),
  );
}
