import { DomainError } from '../errors/domain-error.js';

/**
 * Every route the server registered, so an unknown method on a known path answers 405 with an
 * Allow header instead of 404, and a path that a parametric route would take for a method its
 * own (more specific) route lacks (GET /orders/batch against GET /orders/{id}) is 405 too.
 */
export class RouteRegistry {
  /** Whether a route template takes parameters (only such a route can take a fixed path). */
  static isParametric(url: string): boolean {
    return url.includes(':') || url.includes('*');
  }

  private readonly routes: Route[] = [];
  /** By parametric route: the more specific routes whose paths it would also take. */
  private readonly shadows = new Map<string, Route[]>();

  add(method: string | string[], url: string): void {
    const methods = Array.isArray(method) ? method : [method];
    const segments = url.split('/');
    const pattern = toRegExp(segments);
    const statics = staticCount(segments);
    for (const m of methods) {
      if (m === 'HEAD' || m === 'OPTIONS') continue;
      this.routes.push({ method: m, segments, pattern, statics });
    }
    this.shadows.clear();
  }

  /**
   * The methods of a concrete path (without query string): those of the most specific routes
   * that match it, as the router would choose (/orders/batch is POST only, whatever
   * /orders/{id} takes).
   */
  methodsFor(path: string): string[] {
    let best = -1;
    const found = new Set<string>();
    for (const r of this.routes) {
      if (!r.pattern.test(path) || r.statics < best) continue;
      if (r.statics > best) {
        best = r.statics;
        found.clear();
      }
      found.add(r.method);
    }
    return [...found].sort();
  }

  /**
   * When the router matched `path` to the parametric route `url` although a more specific route
   * owns that path (for other methods), the methods of that path; otherwise null. Only a
   * parametric route can be shadowed (callers ask {@link isParametric} first, to skip the work).
   */
  shadowedMethods(url: string, path: string): string[] | null {
    let candidates = this.shadows.get(url);
    if (candidates === undefined) {
      const segments = url.split('/');
      const statics = staticCount(segments);
      candidates = this.routes.filter(
        (r) =>
          r.statics > statics &&
          r.segments.length === segments.length &&
          segments.every((s, i) => isParam(s) || s === r.segments[i]),
      );
      this.shadows.set(url, candidates);
    }
    for (const r of candidates) if (r.pattern.test(path)) return this.methodsFor(path);
    return null;
  }
}

interface Route {
  method: string;
  segments: string[];
  pattern: RegExp;
  /** Static segments: the more, the more specific. */
  statics: number;
}

function isParam(segment: string): boolean {
  return segment.startsWith(':') || segment === '*';
}

function staticCount(segments: string[]): number {
  return segments.filter((s) => !isParam(s)).length;
}

function toRegExp(segments: string[]): RegExp {
  const parts = segments.map((seg) => {
    if (seg === '*') return '.*';
    if (seg.startsWith(':')) return '[^/]+';
    return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${parts.join('/')}/?$`);
}

/**
 * The path as the router matches it: percent-encoded unreserved characters decoded
 * (/api/v1/%6Darkets is /api/v1/markets), reserved ones such as %2F kept; a malformed escape
 * leaves the raw path (no route will match it).
 */
export function routerPath(raw: string): string {
  try {
    return decodeURI(raw);
  } catch {
    return raw;
  }
}

/**
 * 405 for `method` on a path whose routes take `allowed`; HEAD is GET without the body (Fastify
 * adds it to every GET route), so it is allowed wherever GET is.
 */
export function methodNotAllowed(method: string, path: string, allowed: string[]): DomainError {
  const allow = allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed;
  return new DomainError(
    'METHOD_NOT_ALLOWED',
    `${method} is not allowed on ${path}; allowed: ${allow.join(', ')}`,
    { allowed_methods: allow },
    { Allow: allow.join(', ') },
  );
}
