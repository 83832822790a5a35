/**
 * How many times a header (lower-case `name`) was sent, from Node's raw name/value list: Node
 * keeps only the first Host and joins other repeated headers into one value, so a repeat is
 * visible only here. Names of another length are passed over without lower-casing them.
 */
export function timesSent(rawHeaders: readonly string[], name: string): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const h = rawHeaders[i];
    if (h.length === name.length && h.toLowerCase() === name) n++;
  }
  return n;
}
