/**
 * Every route the server registered, so an unknown method on a known path answers 405 with an
 * Allow header instead of 404.
 */
export class RouteRegistry {
  private readonly routes: { method: string; pattern: RegExp }[] = [];

  add(method: string | string[], url: string): void {
    const methods = Array.isArray(method) ? method : [method];
    const pattern = toRegExp(url);
    for (const m of methods) {
      if (m === 'HEAD' || m === 'OPTIONS') continue;
      this.routes.push({ method: m, pattern });
    }
  }

  /** The methods registered for a concrete path (without query string). */
  methodsFor(path: string): string[] {
    const found = new Set<string>();
    for (const r of this.routes) if (r.pattern.test(path)) found.add(r.method);
    return [...found].sort();
  }
}

function toRegExp(url: string): RegExp {
  const parts = url.split('/').map((seg) => {
    if (seg === '*') return '.*';
    if (seg.startsWith(':')) return '[^/]+';
    return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${parts.join('/')}/?$`);
}
