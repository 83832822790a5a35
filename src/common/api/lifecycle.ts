/** Route lifecycle of SPEC.md (STABLE, then BETA, then DEPRECATED). */
export type LifecycleState = 'STABLE' | 'BETA' | 'DEPRECATED';

export interface Lifecycle {
  state: LifecycleState;
  /** DEPRECATED only: the deprecation date (YYYY-MM-DD, UTC midnight). */
  deprecatedOn?: string;
  /** DEPRECATED only, when scheduled: the date after which the operation answers 410 SUNSET. */
  sunsetOn?: string;
  /**
   * DEPRECATED only: path of the successor operation, e.g. /api/v1/positions/cursor; a path
   * template (/api/v1/indices/{slug}/history) takes the request's path parameters in the Link.
   */
  successor?: string;
}

export const STABLE: Lifecycle = { state: 'STABLE' };

export function utcMidnight(date: string): number {
  const ms = Date.parse(`${date}T00:00:00.000Z`);
  if (Number.isNaN(ms)) throw new RangeError(`Not a date: ${date}`);
  return ms;
}

/**
 * Response headers of a deprecated operation (RFC 9745 Deprecation, RFC 8594 Sunset, Link). A
 * successor path template's `{name}` is filled with the request's path parameter of that name
 * (percent-encoded), so the Link names the successor of this very resource.
 */
export function deprecationHeaders(
  lc: Lifecycle,
  params: Readonly<Record<string, string | undefined>> = {},
): Record<string, string> {
  if (lc.state !== 'DEPRECATED') return {};
  const headers: Record<string, string> = {};
  if (lc.deprecatedOn !== undefined) {
    headers['Deprecation'] = `@${Math.floor(utcMidnight(lc.deprecatedOn) / 1000)}`;
  }
  if (lc.sunsetOn !== undefined) {
    headers['Sunset'] = new Date(utcMidnight(lc.sunsetOn)).toUTCString();
  }
  const successor = successorPath(lc, params);
  if (successor !== undefined) headers['Link'] = `<${successor}>; rel="successor-version"`;
  return headers;
}

/**
 * The successor of this very resource: the successor path template with each `{name}` filled
 * with the request's path parameter of that name (percent-encoded); undefined when none.
 */
export function successorPath(
  lc: Lifecycle,
  params: Readonly<Record<string, string | undefined>> = {},
): string | undefined {
  return lc.successor?.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) => {
    const value = params[name];
    return value === undefined ? whole : encodeURIComponent(value);
  });
}

/** True once the clock has reached the sunset instant. */
export function isSunset(lc: Lifecycle, nowMs: number): boolean {
  return (
    lc.state === 'DEPRECATED' && lc.sunsetOn !== undefined && nowMs >= utcMidnight(lc.sunsetOn)
  );
}
