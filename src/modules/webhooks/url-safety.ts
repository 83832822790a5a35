import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { DomainError, validationFailed } from '../../common/errors/domain-error.js';

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
}

const V4_BLOCKED: [string, number][] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

function inV4(ip: string, [base, bits]: [string, number]): boolean {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (v4ToInt(ip) & mask) >>> 0 === (v4ToInt(base) & mask) >>> 0;
}

/**
 * True for addresses a webhook must never reach: loopback, private, link-local, CGNAT, cloud
 * metadata, multicast/reserved, unique-local and link-local IPv6, and IPv4-mapped/compatible
 * IPv6 forms of any of those.
 */
export function isBlockedAddress(address: string): boolean {
  const ip = bareAddress(address);
  const kind = isIP(ip);
  if (kind === 4) return V4_BLOCKED.some((r) => inV4(ip, r));
  if (kind !== 6) return true;
  const g = v6Groups(ip);
  // NAT64 can reach IPv4 private space through a gateway whatever the tail says: all refused.
  if (g[0] === 0x64 && g[1] === 0xff9b) return true;
  const v4 = embeddedV4(g);
  if (v4 !== null) return isBlockedAddress(v4);
  if (g[0] === 0x2001 && g[1] === 0) return true; // Teredo 2001::/32 tunnels to hidden IPv4
  if ((g[0] & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local
  if ((g[0] & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((g[0] & 0xffc0) === 0xfec0) return true; // fec0::/10 site-local (deprecated)
  if ((g[0] & 0xff00) === 0xff00) return true; // multicast
  return false;
}

/** An address without brackets, zone id or upper case. */
function bareAddress(address: string): string {
  return address
    .replace(/^\[|\]$/g, '')
    .split('%')[0]
    .toLowerCase();
}

/**
 * The IPv4 address an IPv6 address carries, judged in its place, whatever the spelling
 * (compressed or not, dotted or hex): ::/96 (unspecified, loopback, IPv4-compatible),
 * ::ffff:0:0/96 (IPv4-mapped), ::ffff:0:0:0/96 (IPv4-translated) and 6to4 (2002::/16, groups
 * 1-2). Null for any other address.
 */
function embeddedV4(g: number[]): string | null {
  const quad = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && (g[5] === 0 || g[5] === 0xffff)) return quad(g[6], g[7]);
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return quad(g[6], g[7]);
  if (g[0] === 0x2002) return quad(g[1], g[2]);
  // NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48 as a /96): the IPv4 address is the tail.
  if (g[0] === 0x64 && g[1] === 0xff9b) return quad(g[6], g[7]);
  return null;
}

/** The eight 16-bit groups of an address `isIP` accepted as IPv6 (`::` expanded, dotted tail converted). */
function v6Groups(ip: string): number[] {
  let s = ip;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted !== null) {
    const n = v4ToInt(dotted[1]);
    s = `${s.slice(0, -dotted[1].length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const gap = s.indexOf('::');
  const part = (x: string) => (x === '' ? [] : x.split(':'));
  const head = part(gap < 0 ? s : s.slice(0, gap));
  const tail = gap < 0 ? [] : part(s.slice(gap + 2));
  const fill = Array<string>(8 - head.length - tail.length).fill('0');
  return [...head, ...fill, ...tail].map((x) => parseInt(x, 16));
}

/** Cloud metadata services: never a webhook target, whatever WEBHOOK_ALLOW_PRIVATE_TARGETS says. */
const METADATA_V4 = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200']);

/**
 * True for a cloud metadata address (AWS, GCP, Azure, ECS, Alibaba; AWS's IPv6 fd00:ec2::254),
 * also in IPv4-mapped, IPv4-compatible, 6to4 and NAT64 spellings. Refused even where private targets are allowed
 * (staging), since a delivery's answer (status, error) would report back what it found there.
 */
export function isMetadataAddress(address: string): boolean {
  const ip = bareAddress(address);
  const kind = isIP(ip);
  if (kind === 4) return METADATA_V4.has(ip);
  if (kind !== 6) return false;
  const g = v6Groups(ip);
  if (g[0] === 0xfd00 && g[1] === 0x0ec2 && g.slice(2, 7).every((x) => x === 0) && g[7] === 0x254)
    return true;
  const v4 = embeddedV4(g);
  if (v4 !== null && METADATA_V4.has(v4)) return true;
  // The local-use NAT64 prefix 64:ff9b:1::/48 may embed the IPv4 address in any of RFC 6052's
  // /48, /56 and /64 layouts too (bits 64-71 are skipped): any of them naming metadata is refused.
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) {
    const b = g.flatMap((x) => [x >> 8, x & 255]);
    const layouts = [
      [b[6], b[7], b[9], b[10]],
      [b[7], b[9], b[10], b[11]],
      [b[9], b[10], b[11], b[12]],
    ];
    return layouts.some((q) => METADATA_V4.has(q.join('.')));
  }
  return false;
}

const HEX = '[0-9A-Fa-f]{1,4}';
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const V4 = `${OCTET}(?:\\.${OCTET}){3}`;
/** RFC 4291 text forms (no zone id), with an IPv4 tail after :: only. */
const V6 = [
  `(?:${HEX}:){7}${HEX}`,
  `(?:${HEX}:){1,7}:`,
  `(?:${HEX}:){1,6}:${HEX}`,
  `(?:${HEX}:){1,5}(?::${HEX}){1,2}`,
  `(?:${HEX}:){1,4}(?::${HEX}){1,3}`,
  `(?:${HEX}:){1,3}(?::${HEX}){1,4}`,
  `(?:${HEX}:){1,2}(?::${HEX}){1,5}`,
  `${HEX}:(?::${HEX}){1,6}`,
  `:(?:(?::${HEX}){1,7}|:)`,
  `::(?:ffff(?::0{1,4})?:)?${V4}`,
  `(?:${HEX}:){1,4}:${V4}`,
].join('|');
/**
 * A host name of ASCII labels; the last starts with a letter (WHATWG reads a name ending in a
 * number as an IPv4 address, and "a.1" fails), and no label holds "--" (an "xn--" label must be
 * valid punycode, which a pattern cannot check).
 */
const LABEL = '[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*';
const NAME = `(?:${LABEL}\\.)*[A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*`;
const PORT = '(?:6553[0-5]|655[0-2]\\d|65[0-4]\\d{2}|6[0-4]\\d{3}|[1-5]\\d{4}|[1-9]\\d{0,3})';

/**
 * The webhook URL the request schema states: http(s), a host (name, dotted IPv4 or bracketed
 * IPv6), a port 1..65535, then a path and query of visible ASCII without "#". Every URL it takes
 * passes {@link assertSafeWebhookUrl}'s checks of shape (a property test holds it to that), which
 * still judge the target (private, metadata: 422) and, in production, refuse http. The server
 * also takes spellings the pattern leaves out (an upper-case scheme, spaces or non-ASCII in the
 * path, a host in xn-- form or a number such as 2130706433): a client that sends the pattern's
 * form is never refused for its shape.
 */
export const WEBHOOK_URL_SOURCE = `^https?://(?:${NAME}|${V4}|\\[(?:${V6})\\])(?::${PORT})?(?:[/?][!"$-~]*)?$`;

export interface UrlPolicy {
  httpsOnly: boolean;
  allowPrivate: boolean;
}

/** Registration-time check: scheme, shape, and (when private targets are refused) DNS. */
export async function assertSafeWebhookUrl(raw: string, policy: UrlPolicy): Promise<URL> {
  // The URL parser silently drops tabs and newlines and trims leading and trailing spaces and
  // control characters, so what is stored would not be what is called: refused as sent. (A space
  // inside is kept: the parser percent-encodes it.)
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(raw) || raw.trim() !== raw) {
    throw invalid('url must not contain control characters or leading or trailing spaces');
  }
  // "http:///x" or "http:\\x" parse with host "x": the host must follow "//" as written.
  if (!/^https?:\/\/[^/\\?#]/i.test(raw)) {
    throw invalid('url must be an absolute http(s) URL with a host (scheme://host/...)');
  }
  // "https://@host/": an empty user-info the parser drops. Any "@" before the host is refused.
  if (/^https?:\/\/[^/\\?#]*@/i.test(raw)) throw invalid('url must not carry credentials');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url must be a valid absolute URL');
  }
  if (url.port === '0') throw invalid('url must have a port from 1 to 65535');
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw invalid('url must use https (or http outside production)');
  if (policy.httpsOnly && url.protocol !== 'https:') throw invalid('url must use https');
  if (url.username !== '' || url.password !== '') throw invalid('url must not carry credentials');
  if (url.hash !== '') throw invalid('url must not have a fragment');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 && isMetadataAddress(host)) throw unsafe(host);
  if (policy.allowPrivate) return url;
  if (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host.endsWith('.internal') ||
    host.endsWith('.local')
  ) {
    throw unsafe(host);
  }
  if (isIP(host) !== 0) {
    if (isBlockedAddress(host)) throw unsafe(host);
    return url;
  }
  // A well-formed name that does not resolve (now) is the DNS's answer, not bad input: 422.
  const addresses = await resolveAll(host).catch(() => {
    throw new DomainError(
      'WEBHOOK_HOST_UNRESOLVED',
      `The webhook host ${host} does not resolve: check the name, or try again if its DNS is new`,
      { host },
    );
  });
  if (addresses.length === 0 || addresses.some((a) => isBlockedAddress(a.address)))
    throw unsafe(host);
  return url;
}

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true }, (err, addrs) => (err ? reject(err) : resolve(addrs))),
  );
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for http.request that refuses blocked addresses after resolution, at connect time,
 * so a name that re-resolves to a private address (DNS rebinding) is still refused.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addrs) => {
      if (err !== null) {
        callback(err, '', 4);
        return;
      }
      const list = addrs;
      const refused = (a: LookupAddress) =>
        isMetadataAddress(a.address) || (!allowPrivate && isBlockedAddress(a.address));
      if (list.some(refused)) {
        const e = new Error(`blocked address for ${hostname}`) as NodeJS.ErrnoException;
        e.code = 'EBLOCKED';
        callback(e, '', 4);
        return;
      }
      if (options.all === true) callback(null, list);
      else callback(null, list[0].address, list[0].family);
    });
  };
}

function invalid(message: string): DomainError {
  return validationFailed([{ field: 'url', message }]);
}

function unsafe(host: string): DomainError {
  return new DomainError(
    'WEBHOOK_URL_NOT_ALLOWED',
    `Webhook targets must be public: ${host} is loopback, private, link-local, CGNAT or metadata`,
    { host },
  );
}

/**
 * scheme://host/ + the path cut short (at most its first 8 characters, and always at least its
 * last one cut): what a notification may show of an endpoint URL, never the whole of a path (paths
 * often carry a token). Never the query.
 */
export function truncatedUrl(raw: string): string {
  try {
    const u = new URL(raw);
    const p = u.pathname;
    const path = p === '/' ? '/' : `${p.slice(0, Math.min(8, p.length - 1))}…`;
    return `${u.protocol}//${u.host}${path}`;
  } catch {
    return '(invalid url)';
  }
}
