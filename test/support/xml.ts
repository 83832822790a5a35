/**
 * A small, strict XML 1.0 well-formedness checker and parser (no DTDs), enough to prove an RSS
 * feed is well-formed without depending on xmllint: balanced and properly nested tags, quoted and
 * unique attributes, only the predefined and numeric entities, escaped `<` and `&` in text, one
 * root element.
 */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** Concatenated character data directly inside this element (entities decoded). */
  text: string;
}

export class XmlError extends Error {}

const NAME = /^[A-Za-z_:][A-Za-z0-9_:.-]*/;
const ENTITY = /^&(?:#(\d+)|#x([0-9a-fA-F]+)|(amp|lt|gt|quot|apos));/;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function parseXml(source: string): XmlElement {
  let pos = source.startsWith('\uFEFF') ? 1 : 0;
  const src = source;

  const fail = (msg: string): never => {
    const line = src.slice(0, pos).split('\n').length;
    throw new XmlError(`${msg} (line ${line}, offset ${pos})`);
  };
  const skipSpace = () => {
    while (pos < src.length && /\s/.test(src[pos])) pos++;
  };
  const expect = (s: string) => {
    if (!src.startsWith(s, pos)) fail(`expected "${s}"`);
    pos += s.length;
  };
  const name = (): string => {
    const m = NAME.exec(src.slice(pos, pos + 200));
    if (m === null) return fail('expected a name');
    pos += m[0].length;
    return m[0];
  };
  const decode = (raw: string, where: string): string => {
    let out = '';
    for (let i = 0; i < raw.length;) {
      const c = raw[i];
      if (c === '<') fail(`unescaped "<" in ${where}`);
      if (c !== '&') {
        out += c;
        i++;
        continue;
      }
      const m = ENTITY.exec(raw.slice(i, i + 12));
      if (m === null) fail(`bad or undefined entity in ${where}: ${raw.slice(i, i + 12)}`);
      const [all, dec, hex, named] = m as RegExpExecArray;
      out +=
        named !== undefined
          ? NAMED[named]
          : String.fromCodePoint(parseInt(dec ?? hex, dec ? 10 : 16));
      i += all.length;
    }
    return out;
  };
  const skipMisc = () => {
    for (;;) {
      skipSpace();
      if (src.startsWith('<!--', pos)) comment();
      else if (src.startsWith('<?', pos) && !src.startsWith('<?xml ', pos)) pi();
      else return;
    }
  };
  const comment = () => {
    const end = src.indexOf('-->', pos + 4);
    if (end < 0) fail('unterminated comment');
    if (src.slice(pos + 4, end).includes('--')) fail('"--" inside a comment');
    pos = end + 3;
  };
  const pi = () => {
    const end = src.indexOf('?>', pos);
    if (end < 0) fail('unterminated processing instruction');
    pos = end + 2;
  };

  const element = (): XmlElement => {
    expect('<');
    const el: XmlElement = { name: name(), attrs: {}, children: [], text: '' };
    for (;;) {
      const before = pos;
      skipSpace();
      if (src.startsWith('/>', pos)) {
        pos += 2;
        return el;
      }
      if (src[pos] === '>') {
        pos++;
        break;
      }
      if (pos === before) fail(`expected whitespace before an attribute of <${el.name}>`);
      const attr = name();
      if (attr in el.attrs) fail(`duplicate attribute ${attr} on <${el.name}>`);
      skipSpace();
      expect('=');
      skipSpace();
      const q = src[pos];
      if (q !== '"' && q !== "'") fail(`attribute ${attr} is not quoted`);
      const end = src.indexOf(q, pos + 1);
      if (end < 0) fail(`unterminated attribute ${attr}`);
      el.attrs[attr] = decode(src.slice(pos + 1, end), `attribute ${attr}`);
      pos = end + 1;
    }
    for (;;) {
      if (pos >= src.length) fail(`<${el.name}> is never closed`);
      if (src.startsWith('</', pos)) {
        pos += 2;
        const closing = name();
        if (closing !== el.name) fail(`</${closing}> closes <${el.name}>`);
        skipSpace();
        expect('>');
        return el;
      }
      if (src.startsWith('<!--', pos)) comment();
      else if (src.startsWith('<![CDATA[', pos)) {
        const end = src.indexOf(']]>', pos);
        if (end < 0) fail('unterminated CDATA section');
        el.text += src.slice(pos + 9, end);
        pos = end + 3;
      } else if (src.startsWith('<!', pos)) fail('DOCTYPE and declarations are not allowed here');
      else if (src.startsWith('<?', pos)) pi();
      else if (src[pos] === '<') el.children.push(element());
      else {
        const next = src.indexOf('<', pos);
        const raw = src.slice(pos, next < 0 ? src.length : next);
        if (raw.includes(']]>')) fail('"]]>" in character data');
        el.text += decode(raw, `<${el.name}>`);
        pos += raw.length;
      }
    }
  };

  if (src.startsWith('<?xml', pos)) {
    const end = src.indexOf('?>', pos);
    if (end < 0) fail('unterminated XML declaration');
    const decl = src.slice(pos, end);
    if (!/^<\?xml\s+version=(["'])1\.[0-9]\1/.test(decl)) fail('bad XML declaration');
    pos = end + 2;
  }
  skipMisc();
  if (src.startsWith('<!DOCTYPE', pos)) fail('DOCTYPE is not supported by this checker');
  const root = element();
  skipMisc();
  if (pos !== src.length) fail('content after the root element');
  return root;
}

/** The child elements with this name. */
export function childrenNamed(el: XmlElement, name: string): XmlElement[] {
  return el.children.filter((c) => c.name === name);
}

/** The one child element with this name; throws when there is none or more than one. */
export function onlyChild(el: XmlElement, name: string): XmlElement {
  const found = childrenNamed(el, name);
  if (found.length !== 1) {
    throw new XmlError(`<${el.name}> has ${found.length} <${name}> children, expected 1`);
  }
  return found[0];
}
