import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { http, type JsonResponse } from './harness.js';

// The OpenAPI document is JSON of many shapes; it is walked key by key.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Obj = Record<string, any>;

/** ajv-formats is CommonJS: under nodenext its default import is module.exports. */
const addFormats: FormatsPlugin =
  (addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  (addFormatsModule as unknown as FormatsPlugin);

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Base URIs of the component schemas as published, and of a copy that takes no undocumented property. */
const DOCUMENTED = 'https://conformance.test/documented/';
const CLOSED = 'https://conformance.test/closed/';
const COMPONENT_REF = /^#\/components\/schemas\/(.+)$/;
/** OpenAPI 3.1 keywords a Schema Object may carry beside JSON Schema 2020-12 (annotations). */
const OPENAPI_KEYWORDS = ['example', 'discriminator', 'xml', 'externalDocs'];

/** One answer as a client saw it. */
export interface Exchange extends JsonResponse {
  method: string;
  /** Path and query as requested, e.g. /api/v1/orders?limit=1. */
  path: string;
}

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  /** Path parameters in the template: a literal segment wins over a parameter (/orders/export). */
  params: number;
  op: Obj;
  /** operationId (METHOD template), for messages. */
  name: string;
}

/**
 * A copy of a schema with its component references (#/components/schemas/X) pointing at `base`X,
 * where the component schemas are registered under their own $id.
 */
function rebase(node: unknown, base: string): unknown {
  if (Array.isArray(node)) return node.map((n) => rebase(n, base));
  if (node === null || typeof node !== 'object') return node;
  const out: Obj = {};
  for (const [k, v] of Object.entries(node as Obj)) {
    const ref = k === '$ref' && typeof v === 'string' ? COMPONENT_REF.exec(v) : null;
    out[k] = ref !== null ? `${base}${ref[1]}` : rebase(v, base);
  }
  return out;
}

/**
 * A copy of a schema tree in which every object schema that lists its properties and says nothing
 * of others gets `unevaluatedProperties: false`, so a field the service sends and the document
 * does not describe is reported (it is not wrong by JSON Schema, but the document is incomplete).
 * unevaluatedProperties (not additionalProperties) so that allOf/$ref compositions still see the
 * properties their parts describe.
 */
function closeObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (node === null || typeof node !== 'object') return node;
  const out: Obj = {};
  for (const [k, v] of Object.entries(node as Obj)) {
    if (k === 'properties' || k === '$defs' || k === 'dependentSchemas') {
      out[k] = Object.fromEntries(Object.entries(v as Obj).map(([p, s]) => [p, closeObjects(s)]));
    } else if (k === 'example' || k === 'examples' || k === 'enum' || k === 'const') {
      out[k] = v;
    } else {
      out[k] = closeObjects(v);
    }
  }
  if (
    out.properties !== undefined &&
    out.additionalProperties === undefined &&
    out.unevaluatedProperties === undefined
  ) {
    out.unevaluatedProperties = false;
  }
  return out;
}

/**
 * Checks answers of the running service against its own OpenAPI 3.1 document: the status is
 * documented for the operation (or a range or `default`), the Content-Type is one the document
 * lists for it (no body where it lists none), the body validates against the documented schema
 * (ajv, JSON Schema 2020-12), no object carries a property the schema does not describe, headers
 * marked required are present, and integer headers hold integers.
 */
export class OpenApiConformance {
  private readonly ajv: Ajv2020;
  private readonly ops: Operation[] = [];
  private readonly validators = new Map<string, ValidateFunction>();
  /** `METHOD template` -> statuses seen. */
  readonly seen = new Map<string, Set<number>>();

  constructor(private readonly doc: Obj) {
    // Strict mode stays on (unknown keywords, union types without allowUnionTypes, strict types
    // would all throw); the OpenAPI-only annotation keywords are declared instead.
    this.ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addVocabulary(OPENAPI_KEYWORDS);
    const schemas = ((doc.components as Obj | undefined)?.schemas ?? {}) as Obj;
    for (const [name, schema] of Object.entries(schemas)) {
      this.ajv.addSchema({ ...(rebase(schema, DOCUMENTED) as Obj), $id: `${DOCUMENTED}${name}` });
      this.ajv.addSchema({
        ...(rebase(closeObjects(schema), CLOSED) as Obj),
        $id: `${CLOSED}${name}`,
      });
    }
    for (const [template, item] of Object.entries(doc.paths as Obj)) {
      for (const method of METHODS) {
        const op = (item as Obj)[method] as Obj | undefined;
        if (op === undefined) continue;
        const source = template
          .split(/(\{[^}]+\})/)
          .map((part) =>
            part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
          )
          .join('');
        this.ops.push({
          method: method.toUpperCase(),
          template,
          pattern: new RegExp(`^${source}$`),
          params: (template.match(/\{/g) ?? []).length,
          op,
          name: `${String(op.operationId)} (${method.toUpperCase()} ${template})`,
        });
      }
    }
    this.ops.sort((a, b) => a.params - b.params);
  }

  /** The documented operation a request reached, by method and path template. */
  operation(method: string, path: string): Operation | undefined {
    const bare = path.split('?')[0];
    const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
    return this.ops.find((o) => o.method === m && o.pattern.test(bare));
  }

  /** Every documented operation, as `METHOD template`. */
  operations(): string[] {
    return this.ops.map((o) => `${o.method} ${o.template}`);
  }

  /** The compiled response schema (cached per operation, status, media type and variant). */
  private validator(key: string, schema: Obj, closed: boolean): ValidateFunction {
    const id = `${closed ? 'closed' : 'documented'} ${key}`;
    let v = this.validators.get(id);
    if (v === undefined) {
      const base = closed ? CLOSED : DOCUMENTED;
      v = this.ajv.compile(rebase(closed ? closeObjects(schema) : schema, base) as Obj);
      this.validators.set(id, v);
    }
    return v;
  }

  /** A response header as stated, or the component a `$ref` names. */
  private header(h: Obj): Obj {
    const ref = typeof h.$ref === 'string' ? /^#\/components\/headers\/(.+)$/.exec(h.$ref) : null;
    if (ref === null) return h;
    const shared = ((this.doc.components as Obj | undefined)?.headers as Obj | undefined)?.[ref[1]];
    if (shared === undefined) throw new Error(`unresolved header reference ${h.$ref}`);
    return shared as Obj;
  }

  /** What does not conform in one answer (empty when it all does). */
  problems(ex: Exchange): string[] {
    const found = this.operation(ex.method, ex.path);
    if (found === undefined) return [`no documented operation matches ${ex.method} ${ex.path}`];
    const key = `${found.method} ${found.template}`;
    if (!this.seen.has(key)) this.seen.set(key, new Set());
    this.seen.get(key)?.add(ex.status);

    const responses = found.op.responses as Obj;
    const statusKey = [String(ex.status), `${String(ex.status)[0]}XX`, 'default'].find(
      (k) => responses[k] !== undefined,
    );
    if (statusKey === undefined) {
      return [`status ${ex.status} is not documented (documented: ${Object.keys(responses)})`];
    }
    const response = responses[statusKey] as Obj;
    const out: string[] = [];

    for (const [name, stated] of Object.entries((response.headers ?? {}) as Obj)) {
      const h = this.header(stated as Obj);
      const value = ex.headers.get(name);
      if (value === null) {
        if ((h as Obj).required === true) out.push(`required header ${name} is missing`);
      } else if ((h as Obj).schema?.type === 'integer' && !/^-?\d+$/.test(value)) {
        out.push(`header ${name}: ${JSON.stringify(value)} is not an integer`);
      }
    }

    const content = (response.content ?? {}) as Obj;
    const media = Object.keys(content);
    const contentType = (ex.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    if (media.length === 0) {
      if (ex.text !== '') out.push(`a body (${contentType}) where none is documented`);
      return out;
    }
    if (ex.method.toUpperCase() === 'HEAD') return out;
    const mediaKey = media.find((m) => m.toLowerCase() === contentType);
    if (mediaKey === undefined) {
      out.push(`Content-Type ${JSON.stringify(contentType)} is not one of ${media.join(', ')}`);
      return out;
    }
    if (content[mediaKey].schema === undefined) return out;
    const where = `${found.method} ${found.template} ${statusKey} ${mediaKey}`;
    const schema = content[mediaKey].schema as Obj;
    let body: unknown = ex.text;
    if (/[/+]json$/.test(mediaKey)) {
      try {
        body = JSON.parse(ex.text);
      } catch {
        out.push(`body is not JSON: ${ex.text.slice(0, 200)}`);
        return out;
      }
    }
    const documented = this.validator(where, schema, false);
    if (!documented(body)) {
      out.push(`body does not match the schema: ${this.ajv.errorsText(documented.errors)}`);
      return out;
    }
    const closed = this.validator(where, schema, true);
    if (!closed(body)) {
      const extra = (closed.errors ?? [])
        .filter((e) => e.keyword === 'unevaluatedProperties')
        .map((e) => `${e.instancePath || '/'}.${String(e.params.unevaluatedProperty)}`);
      out.push(`undocumented properties: ${[...new Set(extra)].join(', ')}`);
    }
    return out;
  }

  /**
   * What does not conform in a webhook event body: it validates against the document's
   * `webhooks[type]` request body schema and carries no property that schema does not describe.
   */
  webhookProblems(type: string, body: unknown): string[] {
    const op = ((this.doc.webhooks ?? {}) as Obj)[type]?.post as Obj | undefined;
    const schema = op?.requestBody?.content?.['application/json']?.schema as Obj | undefined;
    if (schema === undefined) return [`no webhook ${type} in the document`];
    const where = `webhook ${type}`;
    const documented = this.validator(where, schema, false);
    if (!documented(body)) {
      return [`${type}: ${this.ajv.errorsText(documented.errors)}`];
    }
    const closed = this.validator(where, schema, true);
    return closed(body)
      ? []
      : [`${type}: undocumented properties: ${this.ajv.errorsText(closed.errors)}`];
  }

  /** Throws, naming the operation, the status and every problem, unless the answer conforms. */
  expectConforms(ex: Exchange, status?: number): Exchange {
    const problems = this.problems(ex);
    if (status !== undefined && ex.status !== status) {
      problems.unshift(`expected status ${status} for this scenario`);
    }
    if (problems.length > 0) {
      const op = this.operation(ex.method, ex.path)?.name ?? '(no operation)';
      throw new Error(
        `${op} answered ${ex.status} to ${ex.method} ${ex.path}:\n  - ${problems.join('\n  - ')}\n` +
          `  body: ${ex.text.slice(0, 600)}`,
      );
    }
    return ex;
  }
}

export interface CallOptions {
  /** X-API-Key. */
  key?: string;
  /** Authorization: Bearer. */
  token?: string;
  json?: unknown;
  body?: string;
  headers?: Record<string, string>;
}

/** One request to the service (path relative to its base URL, e.g. /api/v1/markets). */
export async function callService(
  baseUrl: string,
  method: string,
  path: string,
  opts: CallOptions = {},
): Promise<Exchange> {
  const headers = new Headers(opts.headers);
  if (opts.key !== undefined) headers.set('x-api-key', opts.key);
  if (opts.token !== undefined) headers.set('authorization', `Bearer ${opts.token}`);
  const res = await http(`${baseUrl}${path}`, {
    method,
    headers,
    json: opts.json,
    body: opts.body,
  });
  return { ...res, method, path };
}
