import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALL_SCOPES } from '../../src/common/api/scopes.js';
import { expectContractError, http, startApp, type Running } from '../support/harness.js';
import { ROOT } from '../support/process.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The 18 groups of CONTRACT.md, names exact, in the reference's order. */
const TAGS = [
  'Developer',
  'Markets',
  'Orders',
  'Positions',
  'Wallet',
  'Users',
  'Comments',
  'Watchlists',
  'Notifications',
  'Webhooks',
  'Sports',
  'Crypto',
  'Data',
  'Indices',
  'Rank',
  'RFQ',
  'Sandbox',
  'Meta',
];

/** SPEC.md, "Approved breaking change": the 25 admin-gated operations removed from the contract. */
const REMOVED: [string, string][] = [
  ['GET', '/api/v1/disputes/admin/queue'],
  ['GET', '/api/v1/disputes/admin/stats'],
  ['GET', '/api/v1/disputes/admin/{dispute_id}'],
  ['POST', '/api/v1/disputes/admin/{dispute_id}/assign'],
  ['POST', '/api/v1/disputes/admin/{dispute_id}/message'],
  ['PATCH', '/api/v1/disputes/admin/{dispute_id}/priority'],
  ['POST', '/api/v1/disputes/admin/{dispute_id}/resolve'],
  ['POST', '/api/v1/disputes/admin/{dispute_id}/status'],
  ['GET', '/api/v1/moderation/admin/actions'],
  ['GET', '/api/v1/moderation/admin/queue'],
  ['GET', '/api/v1/moderation/admin/queue/stats'],
  ['POST', '/api/v1/moderation/admin/comments/{comment_id}/moderate'],
  ['POST', '/api/v1/moderation/admin/reports/bulk-action'],
  ['GET', '/api/v1/moderation/admin/reports/{report_id}'],
  ['POST', '/api/v1/moderation/admin/reports/{report_id}/resolve'],
  ['GET', '/api/v1/moderation/admin/users/{user_id}/moderation-status'],
  ['POST', '/api/v1/moderation/admin/users/{user_id}/restrict-comments'],
  ['POST', '/api/v1/rewards/admin'],
  ['GET', '/api/v1/rewards/admin/distributions'],
  ['PUT', '/api/v1/rewards/admin/{reward_id}'],
  ['DELETE', '/api/v1/rewards/admin/{reward_id}'],
  ['GET', '/api/v1/geo/lookup/{ip_address}'],
  ['GET', '/api/v1/geo/stats'],
  ['POST', '/api/v1/parlays/seed-demo'],
  ['POST', '/api/v1/intelligence/seed-demo'],
];

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function operations(doc: Obj): { method: string; path: string; op: Obj }[] {
  const out: { method: string; path: string; op: Obj }[] = [];
  for (const [path, item] of Object.entries(doc.paths as Obj)) {
    for (const m of METHODS) if (item[m] !== undefined) out.push({ method: m, path, op: item[m] });
  }
  return out;
}

function resolve(doc: Obj, node: Obj): Obj {
  if (typeof node.$ref !== 'string') return node;
  const parts = (node.$ref as string).replace(/^#\//, '').split('/');
  return resolve(
    doc,
    parts.reduce((n: Obj, p) => n[p], doc),
  );
}

/** Templated path -> a concrete one (the {id} parameters become plausible values). */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, 'x1234567890');

interface LintResult {
  code: number;
  report: { totals: { errors: number; warnings: number }; problems: Obj[] };
  stderr: string;
}

function redoclyLint(file: string): Promise<LintResult> {
  const bin = join(ROOT, 'node_modules', '.bin', 'redocly');
  const args = ['lint', file, '--format=json', `--config=${join(ROOT, '.redocly.yaml')}`];
  return new Promise((res) => {
    execFile(
      bin,
      args,
      {
        cwd: ROOT,
        env: {
          ...process.env,
          REDOCLY_TELEMETRY: 'off',
          REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
          NO_COLOR: '1',
        },
        maxBuffer: 16 * 1024 * 1024,
        timeout: 60_000,
      },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
        let report: LintResult['report'];
        try {
          report = JSON.parse(stdout) as LintResult['report'];
        } catch {
          throw new Error(`redocly printed no JSON report (exit ${code}):\n${stdout}\n${stderr}`);
        }
        res({ code, report, stderr });
      },
    );
  });
}

describe('OpenAPI 3.1 contract', () => {
  let svc: Running;
  let doc: Obj;
  let etag: string;
  beforeAll(async () => {
    svc = await startApp();
    const res = await http(`${svc.api}/openapi/v1.json`);
    expect(res.status).toBe(200);
    doc = res.body;
    etag = res.headers.get('etag') ?? '';
  });
  afterAll(async () => {
    await svc.close();
  });

  it('is served, identical, at /api/v1/openapi/v1.json and /api/v1/openapi.json', async () => {
    const pinned = await http(`${svc.api}/openapi/v1.json`);
    const versioned = await http(`${svc.api}/openapi.json`);
    expect(pinned.status).toBe(200);
    expect(versioned.status).toBe(200);
    expect(pinned.headers.get('content-type')).toMatch(/^application\/json/);
    expect(versioned.text).toBe(pinned.text);
    expect(versioned.headers.get('etag')).toBe(pinned.headers.get('etag'));
    expect(pinned.headers.get('svc-api-version')).toBe('v1');
    expect(pinned.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('states each shared response header once, in components.headers, and refers to it', () => {
    // Inline, the pipeline's headers on ~1,200 responses made the document 2.7 MB; 1.7 with refs.
    const shared = (doc.components as Obj).headers as Record<string, Obj>;
    expect(shared['X-Request-Id']).toMatchObject({ required: true, schema: { type: 'string' } });
    // Retry-After is required on a 429 and not on a 503: two components, each referred to.
    const place = (doc.paths as Obj)['/api/v1/orders'].post.responses as Record<string, Obj>;
    const ref = (status: string, name: string): string => place[status].headers[name].$ref;
    expect(ref('201', 'X-Request-Id')).toBe('#/components/headers/X-Request-Id');
    const retry429 = shared[ref('429', 'Retry-After').split('/').pop()!];
    const retry503 = shared[ref('503', 'Retry-After').split('/').pop()!];
    expect(retry429.required).toBe(true);
    expect(retry503.required).not.toBe(true);
    // No response states inline a header a component already states.
    const forms = new Set(
      Object.entries(shared).map(([key, h]) => `${key.replace(/\.\d+$/, '')} ${JSON.stringify(h)}`),
    );
    const inlineCopies: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Obj>)) {
      for (const op of Object.values(item)) {
        for (const [status, r] of Object.entries((op?.responses ?? {}) as Record<string, Obj>)) {
          for (const [name, h] of Object.entries((r.headers ?? {}) as Record<string, Obj>)) {
            if (forms.has(`${name} ${JSON.stringify(h)}`))
              inlineCopies.push(`${path} ${status} ${name}`);
          }
        }
      }
    }
    expect(inlineCopies).toEqual([]);
  });

  it('its example ids have the shape of real ones (prefix, 10 time, 4 counter, 8 random)', () => {
    const examples: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node !== null && typeof node === 'object') {
        for (const [k, v] of Object.entries(node as Obj)) {
          if (k === 'example' && typeof v === 'string') examples.push(v);
          else walk(v);
        }
      }
    };
    walk(doc);
    const ids = examples.filter((e) => /^(ord|fil|whe|dlv|ntf|txn|usr|key|tier|evt)_/.test(e));
    expect(ids.length).toBeGreaterThanOrEqual(8);
    for (const id of ids) expect([id, /^[a-z]+_[0-9a-z]{22}$/.test(id)]).toEqual([id, true]);
  });

  it('is OpenAPI 3.1.0 with exactly the 18 tags of CONTRACT.md and one staging server', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: expect.any(String), version: 'v1' });
    expect(doc.tags.map((t: Obj) => t.name)).toEqual(TAGS);
    for (const t of doc.tags) expect(t.description.length).toBeGreaterThan(0);
    expect(doc.servers).toEqual([
      { url: 'https://sandbox.staging.svc.example', description: expect.any(String) },
    ]);
    expect(JSON.stringify(doc.servers)).not.toMatch(/prod/i);
  });

  it('declares the X-API-Key and Bearer security schemes', () => {
    expect(doc.components.securitySchemes).toEqual({
      ApiKeyAuth: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
      BearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
  });

  it('gives every operation one known tag, a lifecycle, its scopes, security and error schema', () => {
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThanOrEqual(10);
    const ids = new Set<string>();
    const errorSchema = resolve(doc, doc.components.schemas.ErrorResponseDto);
    expect(errorSchema.required).toEqual(['error']);
    const detail = resolve(doc, errorSchema.properties.error);
    expect([...detail.required].sort()).toEqual([
      'code',
      'details',
      'message',
      'request_id',
      'status',
    ]);

    for (const { method, path, op } of ops) {
      const where = `${method.toUpperCase()} ${path}`;
      expect([where, op.tags?.length]).toEqual([where, 1]);
      expect([where, TAGS.includes(op.tags[0])]).toEqual([where, true]);
      expect([where, ['STABLE', 'BETA', 'DEPRECATED'].includes(op['x-lifecycle'])]).toEqual([
        where,
        true,
      ]);
      expect([where, op.deprecated === true]).toEqual([where, op['x-lifecycle'] === 'DEPRECATED']);
      const scopes = op['x-required-scopes'];
      expect([where, Array.isArray(scopes)]).toEqual([where, true]);
      for (const s of scopes) expect([where, ALL_SCOPES.includes(s)]).toEqual([where, true]);
      expect([where, Array.isArray(op.security)]).toEqual([where, true]);
      // The security requirements carry the same scopes, on known schemes only.
      for (const req of op.security as Obj[]) {
        for (const [scheme, reqScopes] of Object.entries(req)) {
          expect([where, scheme in doc.components.securitySchemes]).toEqual([where, true]);
          expect([where, reqScopes]).toEqual([where, scopes]);
        }
      }
      if (op['x-auth'] === 'public') expect([where, op.security]).toEqual([where, []]);
      else expect([where, op.security.length]).not.toEqual([where, 0]);

      expect([where, typeof op.operationId]).toEqual([where, 'string']);
      expect([where, ids.has(op.operationId)]).toEqual([where, false]);
      ids.add(op.operationId);

      const statuses = Object.keys(op.responses);
      expect([where, statuses.some((s) => /^[23]\d\d$/.test(s))]).toEqual([where, true]);
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        const schema = op.responses[status].content?.['application/json']?.schema;
        expect([where, status, schema]).toEqual([
          where,
          status,
          { $ref: '#/components/schemas/ErrorResponseDto' },
        ]);
      }
    }
  });

  it('states the pipeline on every operation: headers, idempotency, body refusals, who may call', () => {
    const op = (path: string, m: string) => (doc.paths as Obj)[path][m] as Obj;
    const headersOf = (o: Obj, status: string) => Object.keys(o.responses[status].headers ?? {});
    const place = op('/api/v1/orders', 'post');
    expect(place.parameters.map((p: Obj) => p.name)).toContain('Idempotency-Key');
    expect(Object.keys(place.responses)).toEqual(
      expect.arrayContaining(['201', '409', '413', '415', '422', '429']),
    );
    expect(headersOf(place, '201')).toEqual(
      expect.arrayContaining([
        'X-Request-Id',
        'Svc-API-Version',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
        'X-Quota-Daily-Limit',
        'X-Quota-Daily-Remaining',
        'X-Quota-Monthly-Limit',
        'X-Quota-Monthly-Remaining',
        'Idempotent-Replayed',
      ]),
    );
    expect(headersOf(place, '429')).toContain('Retry-After');
    // The operation's own 422 codes and the shared Idempotency-Key one, side by side.
    for (const code of ['INSUFFICIENT_FUNDS', 'OPEN_ORDERS_LIMIT', 'IDEMPOTENCY_KEY_REUSED']) {
      expect(place.responses['422'].description).toContain(code);
    }
    expect(op('/api/v1/orders/{id}', 'delete').responses['409'].description).toContain(
      'ORDER_NOT_OPEN',
    );
    expect(op('/api/v1/webhooks/{id}/reactivate', 'post').responses['409'].description).toContain(
      'WEBHOOK_NOT_SUSPENDED',
    );
    // Request bodies named by a component schema take no other field, as the server enforces.
    const schemas = (doc.components as Obj).schemas as Record<string, Obj>;
    for (const name of ['CreateApiKeyDto', 'CreateWebhookDto', 'AmountDto', 'LoginDto']) {
      expect({ name, closed: schemas[name].additionalProperties }).toEqual({ name, closed: false });
    }
    const amendOp = op('/api/v1/orders/{id}', 'patch');
    for (const code of ['AMEND_NO_CHANGE', 'IDEMPOTENCY_KEY_REUSED']) {
      expect(amendOp.responses['422'].description).toContain(code);
    }
    const idem = place.parameters.find((p: Obj) => p.name === 'Idempotency-Key');
    const pattern = new RegExp(idem.schema.pattern);
    for (const ok of ['a', 'retry 1', 'k'.repeat(255), '~!']) expect(pattern.test(ok)).toBe(true);
    for (const bad of [' a', 'a ', 'a\tb', 'é']) expect(pattern.test(bad)).toBe(false);
    // Deposits answer 422 for a reused Idempotency-Key like any mutation.
    expect(Object.keys(op('/api/v1/wallet/deposits', 'post').responses)).toContain('422');
    // A read takes no Idempotency-Key; a public read has no limit headers.
    expect(op('/api/v1/orders', 'get').parameters.map((p: Obj) => p.name)).not.toContain(
      'Idempotency-Key',
    );
    expect(headersOf(op('/api/v1/health', 'get'), '200')).not.toContain('X-RateLimit-Limit');
    // Deprecated operations state their deprecation headers.
    expect(headersOf(op('/api/v1/wallet/positions', 'get'), '200')).toEqual(
      expect.arrayContaining(['Deprecation', 'Link']),
    );
    // Non-JSON answers declare their media type.
    expect(Object.keys(op('/api/v1/orders/export', 'get').responses['200'].content)).toEqual([
      'text/csv',
    ]);
    expect(Object.keys(op('/api/v1/changelog.rss', 'get').responses['200'].content)).toEqual([
      'application/rss+xml',
    ]);
    // Sessions are refused by cancel-on-disconnect and by the (paper-only) sandbox controls.
    for (const [path, m] of [
      ['/api/v1/orders/cancel-on-disconnect', 'post'],
      ['/api/v1/orders/cancel-on-disconnect', 'get'],
      ['/api/v1/sandbox/reset', 'post'],
    ])
      expect(op(path, m).security.map((s: Obj) => Object.keys(s))).toEqual([['ApiKeyAuth']]);
    expect(op('/api/v1/orders', 'post').security.map((s: Obj) => Object.keys(s)[0])).toEqual([
      'ApiKeyAuth',
      'BearerAuth',
    ]);
    expect(op('/api/v1/orders/cancel-on-disconnect', 'delete')['x-api-key-only']).toBe(true);
    expect(op('/api/v1/orders', 'post').responses['409'].description).toContain(
      'DUPLICATE_CLIENT_ORDER_ID',
    );
    // A body whose every field is optional, which the operation takes absent, is not required
    // (an SDK generated from the document must not force one).
    for (const path of [
      '/api/v1/orders/cancel-on-disconnect',
      '/api/v1/orders/cancel-all',
      '/api/v1/webhooks/{id}/rotate-secret',
      '/api/v1/api-keys/{id}/rotate',
    ]) {
      expect([path, op(path, 'post').requestBody.required]).toEqual([path, false]);
    }
    // A write a session may call names EMAIL_NOT_VERIFIED; a read does not.
    expect(op('/api/v1/orders', 'post').responses['403'].description).toContain(
      'EMAIL_NOT_VERIFIED',
    );
    expect(op('/api/v1/orders', 'get').responses['403'].description).not.toContain(
      'EMAIL_NOT_VERIFIED',
    );
    // Operation-specific codes are named with their status.
    expect(op('/api/v1/auth/register', 'post').responses['409'].description).toContain(
      'EMAIL_TAKEN',
    );
    expect(op('/api/v1/auth/login', 'post').responses['401'].description).toContain(
      'INVALID_CREDENTIALS',
    );
    expect(op('/api/v1/api-keys/{id}/rotate', 'post').responses['403'].description).toContain(
      'SESSION_REQUIRED',
    );
    expect(op('/api/v1/api-keys/{id}/rotate', 'post').responses['409'].description).toContain(
      'API_KEY_NOT_ACTIVE',
    );
    expect(
      op('/api/v1/admin/tier-requests/{id}/approve', 'post').responses['409'].description,
    ).toContain('TIER_REQUEST_NOT_PENDING');
    expect(
      op('/api/v1/orders/cancel-on-disconnect', 'post').responses['403'].description,
    ).toContain('API_KEY_REQUIRED');
    // Any operation may be refused a query parameter it does not take.
    expect(op('/api/v1/wallet', 'get').responses['400']).toBeDefined();
  });

  it('documents the legacy /openapi.json as deprecated with its successor and sunset', () => {
    const legacy = doc.paths['/openapi.json'].get;
    expect(legacy).toMatchObject({
      deprecated: true,
      'x-lifecycle': 'DEPRECATED',
      'x-deprecation': {
        deprecated_on: '2026-05-08',
        sunset_on: '2026-08-08',
        successor: '/api/v1/openapi.json',
      },
      tags: ['Meta'],
    });
    expect(Object.keys(legacy.responses).sort()).toEqual([
      '308',
      '400',
      '403',
      '410',
      '417',
      '429',
      '431',
      '500',
      '503',
    ]);
  });

  it('matches what the service really answers: an error body has exactly the documented fields', async () => {
    const err = expectContractError(await http(`${svc.api}/nope`), 404, 'NOT_FOUND');
    const detail = resolve(doc, doc.components.schemas.ErrorDetailDto);
    expect(Object.keys(err).sort()).toEqual(Object.keys(detail.properties).sort());
  });

  it('passes an independent OpenAPI 3.1 validator (redocly lint) with zero errors', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc, null, 2));
      const { code, report, stderr } = await redoclyLint(file);
      const errors = report.problems.filter((p) => p.severity === 'error');
      expect([code, errors, stderr.includes('validated')]).toEqual([0, [], true]);
      expect(report.totals.errors).toBe(0);
      // The tolerated warnings: the legacy redirect has no 2xx response, by design; and the
      // contract's /rfq/quotes/{id} and /rfq/{id}/quotes would both match /rfq/quotes/quotes,
      // which never names anything (RFQ ids are rfq_..., quote ids quo_...; the router takes the
      // static segment first).
      const warnings = report.problems
        .filter((p) => p.severity === 'warn')
        .map((p) => `${p.ruleId} ${p.location?.[0]?.pointer ?? ''}`);
      expect(warnings.sort()).toEqual([
        'no-ambiguous-paths #/paths/~1api~1v1~1rfq~1quotes~1{id}',
        'operation-2xx-response #/paths/~1openapi.json/get/responses',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the validator is not a rubber stamp: a broken copy of the document fails it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-openapi-'));
    try {
      const broken = JSON.parse(JSON.stringify(doc)) as Obj;
      broken.paths['/api/v1/markets'].get.responses = { '200': { content: {} } }; // no description
      broken.paths['/api/v1/markets'].get.tags = ['NotATag'];
      const file = join(dir, 'broken.json');
      writeFileSync(file, JSON.stringify(broken));
      const { code, report } = await redoclyLint(file);
      expect(code).not.toBe(0);
      expect(report.totals.errors).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('leaves out the 25 removed admin-gated operations, and each answers 404 NOT_FOUND', async () => {
    expect(REMOVED).toHaveLength(25);
    const documented = new Set(
      operations(doc).map(({ method, path }) => `${method.toUpperCase()} ${path}`),
    );
    const prefixes = [
      '/api/v1/disputes/admin',
      '/api/v1/moderation/admin',
      '/api/v1/rewards/admin',
      '/api/v1/geo',
      '/api/v1/parlays/seed-demo',
      '/api/v1/intelligence/seed-demo',
    ];
    for (const path of Object.keys(doc.paths)) {
      expect([path, prefixes.some((p) => path.startsWith(p))]).toEqual([path, false]);
    }
    for (const [method, path] of REMOVED) {
      expect(documented.has(`${method} ${path}`)).toBe(false);
      const res = await http(`${svc.baseUrl}${concrete(path)}`, {
        method,
        ...(method === 'GET' || method === 'DELETE' ? {} : { json: {} }),
      });
      expect([method, path, res.status]).toEqual([method, path, 404]);
      expectContractError(res, 404, 'NOT_FOUND');
    }
  });

  describe('ETag caching', () => {
    const url = () => `${svc.api}/openapi/v1.json`;

    it('sends a strong ETag, stable across requests and shared by both URLs', async () => {
      expect(etag).toMatch(/^"[^"]+"$/);
      expect(etag.startsWith('W/')).toBe(false);
      expect((await http(url())).headers.get('etag')).toBe(etag);
      expect((await http(`${svc.api}/openapi.json`)).headers.get('etag')).toBe(etag);
    });

    it('answers 304 with no body and the ETag when If-None-Match matches', async () => {
      for (const target of [url(), `${svc.api}/openapi.json`]) {
        for (const inm of [etag, '*', `"other", ${etag}`, `W/${etag}`]) {
          const res = await http(target, { headers: { 'if-none-match': inm } });
          expect([inm, res.status]).toEqual([inm, 304]);
          expect(res.text).toBe('');
          expect(res.headers.get('etag')).toBe(etag);
          expect(res.headers.get('svc-api-version')).toBe('v1');
          expect(res.headers.get('x-request-id')).toMatch(/^req_/);
        }
      }
    });

    it('answers 200 with the document when If-None-Match does not match', async () => {
      for (const inm of ['"something-else"', 'W/"something-else"', etag.slice(0, -2) + '"']) {
        const res = await http(url(), { headers: { 'if-none-match': inm } });
        expect([inm, res.status]).toEqual([inm, 200]);
        expect(res.body.openapi).toBe('3.1.0');
        expect(res.headers.get('etag')).toBe(etag);
      }
    });
  });
});
