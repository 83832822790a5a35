import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import fc from 'fast-check';

export { jsonClient, type ClientResponse } from './json-client.js';

/**
 * Request bodies generated from an OpenAPI 3.1 schema (JSON Schema 2020-12): valid ones, and
 * invalid ones that break one rule at a time. Deterministic for a seed. Every body is checked
 * against the schema with ajv before it is handed out, so the generator itself is tested: a
 * "valid" body the schema refuses, or an "invalid" one it takes, is never sent.
 */

// Schemas and bodies are JSON of many shapes; they are walked key by key.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Obj = Record<string, any>;
export type Rng = () => number;

const addFormats: FormatsPlugin =
  (addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  (addFormatsModule as unknown as FormatsPlugin);

/** OpenAPI annotations ajv does not know. */
const OPENAPI_KEYWORDS = ['example', 'discriminator', 'xml', 'externalDocs'];

const DOC_ID = 'https://schema-fuzz.test/openapi.json';

export function ajvFor(components: Record<string, Obj>): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: false, allowUnionTypes: true });
  addFormats(ajv);
  for (const k of OPENAPI_KEYWORDS) ajv.addKeyword(k);
  ajv.addSchema({ $id: DOC_ID, components: { schemas: rebase(components) } });
  return ajv;
}

/** Component refs made absolute, so that a schema compiled alone finds the document's components. */
function rebase(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebase);
  if (node === null || typeof node !== 'object') return node;
  const out: Obj = {};
  for (const [k, v] of Object.entries(node as Obj)) {
    out[k] =
      k === '$ref' && typeof v === 'string' && v.startsWith('#') ? `${DOC_ID}${v}` : rebase(v);
  }
  return out;
}

/** One rule broken: what a fuzzer sends expecting 400. */
export interface Broken {
  body: unknown;
  rule: string;
}

const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

export class BodyGenerator {
  /**
   * Strings matching each pattern: a pool drawn once per process and pattern, shared by every
   * generator (fast-check's sampling is slow per call, and operations share patterns).
   */
  private static readonly patterns = new Map<string, string[]>();
  private readonly validators = new Map<Obj, ValidateFunction>();

  constructor(
    private readonly components: Record<string, Obj>,
    private readonly ajv: Ajv2020,
    private readonly rng: Rng,
  ) {}

  check(schema: Obj, body: unknown): boolean {
    let v = this.validators.get(schema);
    if (v === undefined) {
      v = this.ajv.compile(rebase(schema) as Obj);
      this.validators.set(schema, v);
    }
    return v(body) as boolean;
  }

  /** The schema a $ref names, with siblings of a lone `allOf: [{$ref}]` wrapper kept. */
  resolve(s: Obj): Obj {
    let cur = s;
    for (let i = 0; i < 10; i++) {
      if (typeof cur.$ref === 'string') {
        const name = /^#\/components\/schemas\/(.+)$/.exec(cur.$ref)![1];
        const { $ref: _ref, ...rest } = cur;
        cur = { ...this.components[name], ...rest };
      } else if (Array.isArray(cur.allOf) && cur.allOf.length === 1 && cur.allOf[0].$ref) {
        const { allOf, ...rest } = cur;
        cur = { ...allOf[0], ...rest };
      } else {
        return cur;
      }
    }
    return cur;
  }

  private int(lo: number, hi: number): number {
    return lo + Math.floor(this.rng() * (hi - lo + 1));
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rng() * xs.length)];
  }

  private types(s: Obj): string[] {
    if (Array.isArray(s.type)) return s.type as string[];
    if (typeof s.type === 'string') return [s.type];
    if (s.properties !== undefined) return ['object'];
    if (s.items !== undefined) return ['array'];
    return ['string'];
  }

  /** A value valid against `schema` (checked by the caller). */
  valid(schema: Obj, depth = 0): unknown {
    const s = this.resolve(schema);
    if (s.const !== undefined) return clone(s.const);
    if (Array.isArray(s.enum)) return clone(this.pick(s.enum));
    const branches = (s.oneOf ?? s.anyOf) as Obj[] | undefined;
    if (branches !== undefined) return this.valid(this.pick(branches), depth + 1);
    const types = this.types(s);
    const nonNull = types.filter((t) => t !== 'null');
    if (nonNull.length === 0 || (types.includes('null') && this.rng() < 0.1)) return null;
    switch (this.pick(nonNull)) {
      case 'object':
        return this.object(s, depth);
      case 'array':
        return this.array(s, depth);
      case 'integer':
        return this.integer(s);
      case 'number':
        return this.integer(s) + (s.multipleOf === undefined ? 0.5 : 0);
      case 'boolean':
        return this.rng() < 0.5;
      default:
        return this.string(s);
    }
  }

  private object(s: Obj, depth: number): Obj {
    const props = (s.properties ?? {}) as Record<string, Obj>;
    const required = new Set<string>((s.required ?? []) as string[]);
    const out: Obj = {};
    for (const [name, p] of Object.entries(props)) {
      if (required.has(name) || (depth < 3 && this.rng() < 0.5)) {
        out[name] = this.valid(p, depth + 1);
      }
    }
    // Conditional rules (allOf of if/then): when the `if` holds, bring the body to the `then`;
    // again, as one rule's `then` can make another's `if` hold.
    const rules = ((s.allOf ?? []) as Obj[]).filter((r) => r.if !== undefined);
    for (const rule of [...rules, ...rules, ...rules]) {
      if (rule.if === undefined || rule.then === undefined || !this.check(rule.if, out)) continue;
      for (const name of (rule.then.required ?? []) as string[]) {
        if (out[name] === undefined) out[name] = this.valid(props[name], depth + 1);
      }
      for (const [name, p] of Object.entries((rule.then.properties ?? {}) as Record<string, Obj>)) {
        if (out[name] === undefined) continue;
        if (p.not !== undefined) delete out[name];
        else out[name] = this.valid({ ...props[name], ...p }, depth + 1);
      }
    }
    return out;
  }

  private array(s: Obj, depth: number): unknown[] {
    const min = (s.minItems as number | undefined) ?? 0;
    const max = Math.min((s.maxItems as number | undefined) ?? min + 3, min + 3);
    const n = this.int(min, max);
    const items = this.resolve((s.items ?? {}) as Obj);
    const out: unknown[] = [];
    const seen = new Set<string>();
    for (let tries = 0; out.length < n && tries < n * 10; tries++) {
      const v = this.valid(items, depth + 1);
      const k = JSON.stringify(v);
      if (s.uniqueItems === true && seen.has(k)) continue;
      seen.add(k);
      out.push(v);
    }
    return out;
  }

  private integer(s: Obj): number {
    const lo =
      (s.minimum as number | undefined) ??
      (s.exclusiveMinimum === undefined ? -1000 : s.exclusiveMinimum + 1);
    const hi =
      (s.maximum as number | undefined) ??
      (s.exclusiveMaximum === undefined ? lo + 2000 : s.exclusiveMaximum - 1);
    // The edges and small values are where rules differ most.
    const r = this.rng();
    if (r < 0.15) return lo;
    if (r < 0.3) return hi;
    return this.int(lo, Math.min(hi, lo + Math.max(10, Math.floor((hi - lo) * this.rng()))));
  }

  private string(s: Obj): string {
    const minLength = (s.minLength as number | undefined) ?? 0;
    const maxLength = (s.maxLength as number | undefined) ?? minLength + 40;
    const patterns = [
      ...(typeof s.pattern === 'string' ? [s.pattern] : []),
      ...((s.allOf ?? []) as Obj[]).flatMap((a) =>
        typeof a.pattern === 'string' ? [a.pattern] : [],
      ),
    ];
    for (let tries = 0; tries < 50; tries++) {
      let v: string;
      if (s.format === 'date-time') v = this.dateTime();
      else if (s.format === 'date') v = this.dateTime().slice(0, 10);
      else if (s.format === 'uri' || s.format === 'url') v = `https://example.com/${this.word()}`;
      else if (s.format === 'email') v = `${this.word()}@example.com`;
      else if (patterns.length > 0) v = this.matching(patterns[0]);
      else v = this.text(minLength, Math.min(maxLength, minLength + 24));
      const len = [...v].length;
      const ok =
        len >= minLength && len <= maxLength && patterns.every((p) => new RegExp(p, 'u').test(v));
      if (ok) return v;
    }
    throw new Error(`no string for ${JSON.stringify(s)}`);
  }

  private matching(pattern: string): string {
    let pool = BodyGenerator.patterns.get(pattern);
    if (pool === undefined) {
      pool = fc.sample(fc.stringMatching(new RegExp(pattern, 'u')), {
        seed: this.int(0, 2 ** 31 - 1),
        numRuns: 300,
      });
      BodyGenerator.patterns.set(pattern, pool);
    }
    return this.pick(pool);
  }

  private word(): string {
    return Array.from({ length: this.int(1, 10) }, () =>
      this.pick('abcdefghijklmnopqrstuvwxyz0123456789'.split('')),
    ).join('');
  }

  /** Visible text, sometimes with spaces, accents and an emoji (one code point each). */
  private text(min: number, max: number): string {
    const chars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.,é€😀';
    const n = this.int(Math.max(min, 1), Math.max(max, 1));
    let out = this.pick('abcXYZ'.split('')); // shows something
    for (let i = 1; i < n; i++) out += this.pick([...chars]);
    return out.trimEnd() === out ? out : `${out.trimEnd()}x`;
  }

  /** An RFC 3339 date-time in its spellings: T or t, Z, z or an offset, 0..9 fraction digits. */
  dateTime(base = Date.UTC(2026, 10, 22, 12), spreadDays = 300): string {
    const ms = base + Math.floor((this.rng() - 0.5) * spreadDays * 86_400_000);
    const offsetMin = this.pick([0, 0, 60, -300, 330, 23 * 60 + 59, -(23 * 60 + 59)]);
    const local = new Date(ms + offsetMin * 60_000).toISOString().slice(0, 19);
    const frac = this.pick(['', '.5', '.123', '.123456', '.000000001']);
    const zone =
      offsetMin === 0
        ? this.pick(['Z', 'z', '+00:00', '-00:00'])
        : `${offsetMin < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offsetMin) / 60)).padStart(2, '0')}:${String(Math.abs(offsetMin) % 60).padStart(2, '0')}`;
    const t = this.pick(['T', 't']);
    return `${local.slice(0, 10)}${t}${local.slice(11)}${frac}${zone}`;
  }

  /** A value that breaks `s` as a wrong type does. */
  private wrongType(s: Obj): unknown {
    const types = this.types(s);
    const candidates: unknown[] = [12345, 'text', true, [1], { a: 1 }, 1.5].filter((v) => {
      const t = Array.isArray(v)
        ? 'array'
        : typeof v === 'object'
          ? 'object'
          : typeof v === 'number'
            ? Number.isInteger(v)
              ? 'integer'
              : 'number'
            : typeof v;
      return !types.includes(t) && !(t === 'integer' && types.includes('number'));
    });
    return this.pick(candidates);
  }

  /** The ways to break one property of an object schema (or the object itself). */
  private breakers(s: Obj, body: Obj, depth: number): (() => Broken | null)[] {
    const props = (s.properties ?? {}) as Record<string, Obj>;
    const out: (() => Broken | null)[] = [];
    for (const name of (s.required ?? []) as string[]) {
      out.push(() => {
        const b = clone(body);
        delete b[name];
        return { body: b, rule: `missing required ${name}` };
      });
    }
    if (s.additionalProperties === false) {
      out.push(() => ({ body: { ...clone(body), zz_unknown_field: 1 }, rule: 'extra property' }));
    }
    for (const [name, raw] of Object.entries(props)) {
      const p = this.resolve(raw);
      const set = (rule: string, v: unknown) => () => ({
        body: { ...clone(body), [name]: v },
        rule: `${name}: ${rule}`,
      });
      out.push(set('wrong type', this.wrongType(p)));
      if (Array.isArray(p.enum)) out.push(set('bad enum', 'NOT_AN_ENUM_VALUE'));
      if (typeof p.pattern === 'string') {
        out.push(() => {
          const bad = ['', ' ', '!', '\u00e9\u00e9\u00e9', 'x y'].find(
            (v) => !new RegExp(p.pattern as string, 'u').test(v),
          );
          return bad === undefined ? null : set('bad pattern', bad)();
        });
      }
      if (typeof p.maximum === 'number') out.push(set('above maximum', p.maximum + 1));
      if (typeof p.minimum === 'number') out.push(set('below minimum', p.minimum - 1));
      if (typeof p.maxLength === 'number') out.push(set('too long', 'x'.repeat(p.maxLength + 1)));
      if (typeof p.minLength === 'number' && p.minLength > 0) {
        out.push(set('too short', 'x'.repeat(p.minLength - 1)));
      }
      if (this.types(p).includes('array')) {
        const item = () => this.valid((p.items ?? {}) as Obj, depth + 1);
        if (typeof p.maxItems === 'number') {
          out.push(() => set('too many items', Array.from({ length: p.maxItems + 1 }, item))());
        }
        if (typeof p.minItems === 'number' && p.minItems > 0) {
          out.push(set('too few items', []));
        }
        if (p.uniqueItems === true) {
          out.push(() => {
            const v = item();
            return set('repeated item', [v, clone(v)])();
          });
        }
      }
      const inner = body[name];
      if (
        depth < 2 &&
        this.types(p).includes('object') &&
        inner !== null &&
        typeof inner === 'object'
      ) {
        for (const f of this.breakers(p, inner as Obj, depth + 1)) {
          out.push(() => {
            const r = f();
            return r === null
              ? null
              : { body: { ...clone(body), [name]: r.body }, rule: `${name}.${r.rule}` };
          });
        }
      }
    }
    // A conditional rule: make its `if` hold and its `then` fail.
    for (const rule of (s.allOf ?? []) as Obj[]) {
      if (rule.if === undefined || rule.then === undefined) continue;
      out.push(() => {
        const b = clone(body);
        for (const [name, p] of Object.entries((rule.if.properties ?? {}) as Record<string, Obj>)) {
          if (p.const !== undefined) b[name] = p.const;
          else if (Array.isArray(p.enum)) b[name] = this.pick(p.enum);
        }
        // An `if` of absent fields ({not: {required}}): take them out.
        for (const name of (rule.if.not?.required ?? []) as string[]) delete b[name];
        const then = rule.then as Obj;
        const options: (() => void)[] = [];
        for (const name of (then.required ?? []) as string[]) options.push(() => delete b[name]);
        for (const [name, p] of Object.entries((then.properties ?? {}) as Record<string, Obj>)) {
          const full = this.resolve(props[name] ?? {});
          if (p.not !== undefined) options.push(() => (b[name] = this.valid(full, depth + 1)));
          const allowed = p.const !== undefined ? [p.const] : (p.enum as unknown[] | undefined);
          const others = ((full.enum ?? []) as unknown[]).filter((v) => !allowed?.includes(v));
          if (allowed !== undefined && others.length > 0) {
            options.push(() => (b[name] = this.pick(others)));
          }
        }
        if (options.length === 0) return null;
        this.pick(options)();
        return { body: b, rule: 'conditional rule broken' };
      });
    }
    return out;
  }

  /** A body that breaks one rule of `schema`, starting from the valid `body`; null if none. */
  invalid(schema: Obj, body: unknown): Broken | null {
    const s = this.resolve(schema);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
    const all = this.breakers(s, body as Obj, 0);
    for (let tries = 0; tries < 20 && all.length > 0; tries++) {
      const broken = this.pick(all)();
      if (broken !== null && !this.check(schema, broken.body)) return broken;
    }
    return null;
  }
}
