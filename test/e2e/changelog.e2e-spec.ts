import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { http, startApp, type Running } from '../support/harness.js';
import { childrenNamed, onlyChild, parseXml, XmlError, type XmlElement } from '../support/xml.js';

/** RFC 822 date-time as RSS 2.0 wants it (four-digit year, GMT). */
const RFC822 =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

interface Entry {
  id: string;
  date: string;
  title: string;
  kind: string;
  description: string;
}

describe('changelog', () => {
  let svc: Running;
  let entries: Entry[];
  beforeAll(async () => {
    svc = await startApp();
    const res = await http(`${svc.api}/changelog`);
    expect(res.status).toBe(200);
    entries = res.body.data;
  });
  afterAll(async () => {
    await svc.close();
  });

  it('GET /api/v1/changelog lists dated entries, newest first, with a link to the feed', async () => {
    const res = await http(`${svc.api}/changelog`);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.rss).toBe('/api/v1/changelog.rss');
    expect(entries.length).toBeGreaterThanOrEqual(3);
    for (const e of entries) {
      expect(e.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(new Date(`${e.date}T00:00:00Z`).toISOString().slice(0, 10)).toBe(e.date);
      expect(['ADDED', 'CHANGED', 'DEPRECATED', 'REMOVED']).toContain(e.kind);
      expect(e.title.length).toBeGreaterThan(0);
      expect(e.description.length).toBeGreaterThan(0);
    }
    const dates = entries.map((e) => e.date);
    expect(dates).toEqual([...dates].sort().reverse());
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
  });

  it('records the 2026-05-08 deprecation of /openapi.json and the admin-operations removal', () => {
    const deprecation = entries.find(
      (e) =>
        e.date === '2026-05-08' &&
        e.kind === 'DEPRECATED' &&
        e.description.includes('/openapi.json'),
    );
    expect(deprecation?.description).toContain('2026-08-08');
    const removal = entries.find(
      (e) => e.date === '2026-05-08' && e.kind === 'REMOVED' && /admin/i.test(e.title),
    );
    expect(removal?.description).toMatch(/25 admin-gated operations/);
  });

  describe('GET /api/v1/changelog.rss', () => {
    let text: string;
    let rss: XmlElement;
    beforeAll(async () => {
      const res = await http(`${svc.api}/changelog.rss`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/rss\+xml(;|$)/);
      expect(res.headers.get('svc-api-version')).toBe('v1');
      text = res.text;
      rss = parseXml(text);
    });

    it('is well-formed RSS 2.0 with a channel title, link and description', () => {
      expect(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
      expect(rss.name).toBe('rss');
      expect(rss.attrs.version).toBe('2.0');
      const channel = onlyChild(rss, 'channel');
      expect(onlyChild(channel, 'title').text.length).toBeGreaterThan(0);
      expect(onlyChild(channel, 'link').text).toMatch(/^https:\/\/.+\/api\/v1\/changelog$/);
      expect(onlyChild(channel, 'description').text.length).toBeGreaterThan(0);
      expect(onlyChild(channel, 'lastBuildDate').text).toMatch(RFC822);
    });

    it('has one item per JSON entry, each with title, guid and an RFC 822 pubDate', () => {
      const items = childrenNamed(onlyChild(rss, 'channel'), 'item');
      expect(items).toHaveLength(entries.length);
      items.forEach((item, i) => {
        const e = entries[i];
        expect(onlyChild(item, 'title').text).toBe(e.title);
        expect(onlyChild(item, 'guid').text).toBe(e.id);
        expect(onlyChild(item, 'description').text).toBe(e.description);
        const pubDate = onlyChild(item, 'pubDate').text;
        expect(pubDate).toMatch(RFC822);
        expect(new Date(pubDate).toISOString()).toBe(`${e.date}T00:00:00.000Z`);
        expect(new Date(pubDate).toUTCString()).toBe(pubDate);
      });
    });
  });

  it('the XML checker itself rejects what is not well-formed', () => {
    for (const bad of [
      '<a><b></a></b>',
      '<a>',
      '<a>x < y</a>',
      '<a>Q&A</a>',
      '<a>&nbsp;</a>',
      '<a x=1/>',
      '<a x="1" x="2"/>',
      '<a/><b/>',
      '<a></A>',
      '<!DOCTYPE a><a/>',
    ]) {
      expect(() => parseXml(bad)).toThrow(XmlError);
    }
    expect(
      parseXml(
        '<?xml version="1.0"?><a k="&amp;"><b>&lt;&#65;&#x42;</b><!-- c --><![CDATA[<x>]]></a>',
      ),
    ).toEqual({
      name: 'a',
      attrs: { k: '&' },
      children: [{ name: 'b', attrs: {}, children: [], text: '<AB' }],
      text: '<x>',
    });
  });
});
