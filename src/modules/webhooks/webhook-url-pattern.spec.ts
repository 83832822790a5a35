import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DomainError } from '../../common/errors/domain-error.js';
import { assertSafeWebhookUrl, WEBHOOK_URL_SOURCE, type UrlPolicy } from './url-safety.js';

const PATTERN = new RegExp(WEBHOOK_URL_SOURCE, 'u');

/** The code assertSafeWebhookUrl refuses a URL with, or null when it takes it. */
async function refusal(url: string, policy: UrlPolicy): Promise<string | null> {
  try {
    await assertSafeWebhookUrl(url, policy);
    return null;
  } catch (e) {
    if (e instanceof DomainError) return e.code;
    throw e;
  }
}

/** The shape check only: private targets allowed (no DNS), http allowed (not production). */
const SHAPE_ONLY: UrlPolicy = { httpsOnly: false, allowPrivate: true };

describe('WEBHOOK_URL_SOURCE, the url pattern of the webhook request schemas', () => {
  it('every URL it takes passes the server shape checks (only a target rule may refuse it, 422)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.stringMatching(PATTERN), async (url) => {
        const code = await refusal(url, SHAPE_ONLY);
        expect({ url, code: code === 'WEBHOOK_URL_NOT_ALLOWED' ? null : code }).toEqual({
          url,
          code: null,
        });
      }),
      { numRuns: 1000, seed: 21 },
    );
  });

  it.each([
    'https://example.com/hooks/svc',
    'https://example.com',
    'http://127.0.0.1:9/hook',
    'https://a-b.c_d.example:65535/p?q=1&r=%20',
    'https://[::1]:8080/x',
    'https://[2001:db8::1]/',
    'https://[::ffff:93.184.216.34]/',
    'https://93.184.216.34/a/b~c',
    'https://h.example?only=query',
  ])('takes %s, and so does the server', async (url) => {
    expect(PATTERN.test(url)).toBe(true);
    expect(await refusal(url, SHAPE_ONLY)).toBeNull();
  });

  // Every URL the server refuses as malformed (400), outside production too, fails the pattern.
  it.each([
    'ftp://example.com/',
    'not a url',
    'https://user:pass@example.com/',
    'https://@example.com/',
    'https://example.com/#frag',
    'https://example.com/#',
    'http://example.com/\r\nX-Injected: 1',
    'https://example.com/\u0000',
    ' https://example.com/',
    'https://example.com/\t',
    'http:///x',
    'https:\\\\example.com/',
    'https:example.com/',
    'https://example.com:0/',
    'https://example.com:65536/',
    'https://a.1/',
    'https://xn--a.com/',
    'https://[:::1]/',
    'https://exa mple.com/',
    '',
  ])('refuses %j', async (url) => {
    expect(PATTERN.test(url)).toBe(false);
  });

  it('a well-formed name that does not resolve is 422 WEBHOOK_HOST_UNRESOLVED naming the host, not a 400', async () => {
    const url = 'https://no-such-host.invalid/hook';
    expect(PATTERN.test(url)).toBe(true);
    await expect(
      assertSafeWebhookUrl(url, { httpsOnly: true, allowPrivate: false }),
    ).rejects.toMatchObject({
      code: 'WEBHOOK_HOST_UNRESOLVED',
      details: { host: 'no-such-host.invalid' },
    });
  });
});
