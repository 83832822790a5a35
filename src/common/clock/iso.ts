let lastMs = NaN;
let lastText = '';

/**
 * ISO-8601 text of an epoch-ms time. The events of one batch, and the answers built from them,
 * mostly share a millisecond, so the last conversion is kept (toISOString was a visible share of
 * the order path's CPU).
 */
export function iso(ms: number): string {
  if (ms !== lastMs) {
    lastText = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastText;
}
