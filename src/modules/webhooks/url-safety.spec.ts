import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from '@jest/globals';
import { DomainError } from '../../common/errors/domain-error.js';
import {
  assertSafeWebhookUrl,
  guardedLookup,
  isBlockedAddress,
  isMetadataAddress,
  truncatedUrl,
} from './url-safety.js';

const BLOCKED_V4 = [
  ['0.0.0.0', 'this network'],
  ['0.255.255.255', 'this network (top)'],
  ['10.0.0.1', 'private 10/8'],
  ['10.255.255.255', 'private 10/8 (top)'],
  ['100.64.0.1', 'CGNAT 100.64/10'],
  ['100.127.255.254', 'CGNAT (top)'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback (top)'],
  ['169.254.169.254', 'cloud metadata'],
  ['169.254.0.1', 'link-local'],
  ['172.16.0.1', 'private 172.16/12'],
  ['172.31.255.255', 'private 172.16/12 (top)'],
  ['192.0.0.8', 'IETF protocol assignments'],
  ['192.168.0.1', 'private 192.168/16'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking (top)'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast (SSDP)'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
];

const PUBLIC_V4 = [
  '1.1.1.1',
  '8.8.8.8',
  '9.255.255.255', // just below 10/8
  '11.0.0.1', // just above 10/8
  '100.63.255.255', // just below CGNAT
  '100.128.0.0', // just above CGNAT
  '126.255.255.255',
  '128.0.0.1',
  '169.253.255.255',
  '169.255.0.1',
  '172.15.255.255', // just below 172.16/12
  '172.32.0.0', // just above 172.16/12
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '93.184.216.34',
];

const BLOCKED_V6 = [
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback, uncompressed'],
  ['::', 'unspecified'],
  ['0:0:0:0:0:0:0:0', 'unspecified, uncompressed'],
  ['[::1]', 'bracketed as in a URL'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local with a zone'],
  ['febf::1', 'link-local (top of fe80::/10)'],
  ['fc00::1', 'unique local'],
  ['fd12:3456:789a::1', 'unique local fd00::/8'],
  ['ff02::1', 'multicast'],
  ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
  // IPv4-mapped, dotted and hex, every blocked range
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback, dotted'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['::FFFF:7F00:0001', 'IPv4-mapped loopback, hex upper case'],
  ['0:0:0:0:0:ffff:7f00:1', 'IPv4-mapped loopback, uncompressed hex'],
  ['0:0:0:0:0:ffff:127.0.0.1', 'IPv4-mapped loopback, uncompressed dotted'],
  ['::ffff:10.1.2.3', 'IPv4-mapped private, dotted'],
  ['::ffff:a01:203', 'IPv4-mapped private, hex'],
  ['::ffff:169.254.169.254', 'IPv4-mapped metadata, dotted'],
  ['::ffff:a9fe:a9fe', 'IPv4-mapped metadata, hex'],
  ['::ffff:100.64.0.1', 'IPv4-mapped CGNAT, dotted'],
  ['::ffff:6440:1', 'IPv4-mapped CGNAT, hex'],
  ['::ffff:192.168.1.1', 'IPv4-mapped private 192.168, dotted'],
  ['::ffff:c0a8:101', 'IPv4-mapped private 192.168, hex'],
  ['::ffff:0.0.0.0', 'IPv4-mapped this-network'],
  // IPv4-compatible (deprecated) forms
  ['::127.0.0.1', 'IPv4-compatible loopback, dotted'],
  ['::7f00:1', 'IPv4-compatible loopback, hex'],
  ['::a9fe:a9fe', 'IPv4-compatible metadata, hex'],
  ['::ffff:0:127.0.0.1', 'IPv4-translated loopback'],
  ['fec0::1', 'site-local (deprecated)'],
];

const PUBLIC_V6 = [
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '::ffff:8.8.8.8',
  '::ffff:808:808', // 8.8.8.8, hex
  '::ffff:5db8:d822', // 93.184.216.34, hex
];

const NOT_ADDRESSES = ['', 'localhost', 'example.com', '127.1', '256.0.0.1', '::ffff:zz', '1.2.3'];

describe('isBlockedAddress', () => {
  it.each(BLOCKED_V4)('blocks %s (%s)', (ip) => {
    expect(isBlockedAddress(ip)).toBe(true);
  });
  it.each(PUBLIC_V4)('allows public %s', (ip) => {
    expect(isBlockedAddress(ip)).toBe(false);
  });
  it.each(BLOCKED_V6)('blocks %s (%s)', (ip) => {
    expect(isBlockedAddress(ip)).toBe(true);
  });
  it.each(PUBLIC_V6)('allows public %s', (ip) => {
    expect(isBlockedAddress(ip)).toBe(false);
  });
  it.each(NOT_ADDRESSES)('fails closed on %j, which is not an IP address', (s) => {
    expect(isBlockedAddress(s)).toBe(true);
  });
});

type Lookup = ReturnType<typeof guardedLookup>;

function run(
  lookup: Lookup,
  host: string,
  all: boolean,
): Promise<{
  err: NodeJS.ErrnoException | null;
  address: string | LookupAddress[];
  family?: number;
}> {
  return new Promise((resolve) =>
    lookup(host, { all }, (err, address, family) => resolve({ err, address, family })),
  );
}

describe('guardedLookup (connect-time refusal after DNS resolution)', () => {
  it.each([
    'localhost',
    '127.0.0.1',
    '10.0.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    'fd00::1',
  ])('refuses %s with EBLOCKED when private targets are not allowed', async (host) => {
    for (const all of [true, false]) {
      const r = await run(guardedLookup(false), host, all);
      expect(r.err).not.toBeNull();
      expect(r.err!.code).toBe('EBLOCKED');
    }
  });

  it('passes a public address through, in both callback shapes', async () => {
    const one = await run(guardedLookup(false), '93.184.216.34', false);
    expect(one).toEqual({ err: null, address: '93.184.216.34', family: 4 });
    const all = await run(guardedLookup(false), '93.184.216.34', true);
    expect(all.err).toBeNull();
    expect(all.address).toEqual([{ address: '93.184.216.34', family: 4 }]);
  });

  it('allows loopback when private targets are allowed (development receivers)', async () => {
    const r = await run(guardedLookup(true), '127.0.0.1', false);
    expect(r).toEqual({ err: null, address: '127.0.0.1', family: 4 });
    const l = await run(guardedLookup(true), 'localhost', true);
    expect(l.err).toBeNull();
    expect((l.address as LookupAddress[]).length).toBeGreaterThan(0);
  });

  it('passes resolution errors through', async () => {
    const r = await run(guardedLookup(false), 'no-such-host.invalid', true);
    expect(r.err).not.toBeNull();
    expect(r.err!.code).not.toBe('EBLOCKED');
  });
});

async function refusal(url: string, policy = { httpsOnly: true, allowPrivate: false }) {
  try {
    await assertSafeWebhookUrl(url, policy);
  } catch (e) {
    if (e instanceof DomainError) return e.code;
    throw e;
  }
  return null;
}

describe('assertSafeWebhookUrl (registration)', () => {
  it.each([
    'https://127.0.0.1/hook',
    'https://10.0.0.1/',
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:a9fe:a9fe]/',
    'https://[fe80::1]/',
    'https://localhost/',
    'https://api.localhost/',
    'https://metadata.google.internal/',
    'https://printer.local/',
    'https://2130706433/', // 127.0.0.1 as a decimal number
    'https://0x7f.0.0.1/', // and in hex
    'https://0/',
  ])('refuses %s with WEBHOOK_URL_NOT_ALLOWED', async (url) => {
    expect(await refusal(url)).toBe('WEBHOOK_URL_NOT_ALLOWED');
  });

  it.each([
    'http://example.com/hook', // production needs https
    'ftp://example.com/',
    'not a url',
    'https://user:pass@example.com/',
    'https://example.com/#frag',
    // What the parser would silently repair, so the stored URL would not be the one called.
    'http://example.com/\r\nX-Injected: 1',
    'https://example.com/\u0000',
    'https://@example.com/',
    ' https://example.com/',
    'https://example.com/\t',
    'http:///x',
    'https:\\\\example.com/',
    'https:example.com/',
    // Port 0 would be called as the default port.
    'https://example.com:0/',
    'http://127.0.0.1:0/',
  ])('refuses %s with VALIDATION_FAILED', async (url) => {
    expect(await refusal(url)).toBe('VALIDATION_FAILED');
  });

  it('accepts a public address; development with private targets allowed accepts loopback over http', async () => {
    expect(await refusal('https://93.184.216.34/hooks')).toBeNull();
    // A space inside is percent-encoded by the parser (what is called is what was meant).
    expect(await refusal('https://93.184.216.34/a b?q=1')).toBeNull();
    expect(await refusal('HTTPS://93.184.216.34:8443/%7Ex')).toBeNull();
    expect(
      await refusal('http://[::1]:8080/x', { httpsOnly: false, allowPrivate: true }),
    ).toBeNull();
    expect(
      await refusal('http://127.0.0.1:8080/x', { httpsOnly: false, allowPrivate: true }),
    ).toBeNull();
    expect(
      await refusal('http://127.0.0.1:8080/x', { httpsOnly: false, allowPrivate: false }),
    ).toBe('WEBHOOK_URL_NOT_ALLOWED');
  });
});

describe('truncatedUrl', () => {
  it('keeps scheme, host (and port) and cuts the path; never the query', () => {
    expect(truncatedUrl('https://hooks.example.com/customers/4711/secret-path?token=abc')).toBe(
      'https://hooks.example.com/custome…',
    );
    // A short path is cut too: never the whole URL.
    expect(truncatedUrl('http://127.0.0.1:8080/abc')).toBe('http://127.0.0.1:8080/ab…');
    expect(truncatedUrl('https://h.example/t0k3n')).toBe('https://h.example/t0k3…');
    expect(truncatedUrl('https://h.example/x')).toBe('https://h.example/…');
    expect(truncatedUrl('https://example.com')).toBe('https://example.com/');
    expect(truncatedUrl('::')).toBe('(invalid url)');
  });
});

describe('IPv6 tunnels that embed IPv4 (6to4, Teredo)', () => {
  it('6to4 is judged by its embedded IPv4 address; Teredo is refused', () => {
    expect(isBlockedAddress('2002:a9fe:a9fe::')).toBe(true); // 169.254.169.254
    expect(isBlockedAddress('2002:0a00:0001::1')).toBe(true); // 10.0.0.1
    expect(isBlockedAddress('2002:7f00:0001::')).toBe(true); // 127.0.0.1
    expect(isBlockedAddress('2002:0808:0808::1')).toBe(false); // 8.8.8.8
    expect(isBlockedAddress('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toBe(true);
    expect(isBlockedAddress('2001:db8::1')).toBe(false); // only 2001:0::/32 is Teredo
  });
});

describe('cloud metadata: refused even where private targets are allowed', () => {
  it('isMetadataAddress knows the metadata services in every spelling, and nothing else', () => {
    // NAT64 spellings (the IPv4 address is the tail).
    for (const a of ['64:ff9b::a9fe:a9fe', '64:ff9b::169.254.169.254', '64:ff9b:1::a9fe:a9fe'])
      expect(isMetadataAddress(a)).toBe(true);
    expect(isMetadataAddress('64:ff9b::808:808')).toBe(false);
    // The local-use prefix's other RFC 6052 layouts (/48, /56, /64) for 169.254.169.254.
    for (const a of [
      '64:ff9b:1:a9fe:a9:fe00::',
      '64:ff9b:1:a9:fe:a9fe::',
      '64:ff9b:1:0:a9:fea9:fe00:0',
    ])
      expect(isMetadataAddress(a)).toBe(true);
    for (const ip of [
      '169.254.169.254',
      '169.254.170.2',
      '100.100.100.200',
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      '2002:a9fe:a9fe::',
      'fd00:ec2::254',
      '[fd00:ec2::254]',
    ])
      expect({ ip, metadata: isMetadataAddress(ip) }).toEqual({ ip, metadata: true });
    for (const ip of ['169.254.1.1', '127.0.0.1', '10.0.0.1', '8.8.8.8', '::1', 'fd00:ec2::253'])
      expect({ ip, metadata: isMetadataAddress(ip) }).toEqual({ ip, metadata: false });
  });

  it('registration refuses a metadata URL with private targets allowed; a private one passes', async () => {
    const policy = { httpsOnly: false, allowPrivate: true };
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/x']) {
      await expect(assertSafeWebhookUrl(url, policy)).rejects.toMatchObject({
        code: 'WEBHOOK_URL_NOT_ALLOWED',
      });
    }
    await expect(assertSafeWebhookUrl('http://127.0.0.1:9/x', policy)).resolves.toBeInstanceOf(URL);
  });

  it('the connect-time lookup refuses metadata even with private targets allowed', async () => {
    for (const host of ['169.254.169.254', '::ffff:169.254.169.254']) {
      const r = await run(guardedLookup(true), host, false);
      expect(r.err?.code).toBe('EBLOCKED');
    }
    expect((await run(guardedLookup(true), '169.254.1.1', false)).err).toBeNull();
  });
});
