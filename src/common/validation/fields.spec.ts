import { describe, expect, it } from '@jest/globals';
import { validateSync } from 'class-validator';
import { PlainText } from './fields.js';

class Texts {
  @PlainText() name?: string;
  @PlainText({ multiline: true }) note?: string;
}

/** The fields of `values` PlainText refuses. */
function refused(values: Partial<Texts>): string[] {
  return validateSync(Object.assign(new Texts(), values)).map((e) => e.property);
}

describe('PlainText', () => {
  it('one line: refuses the line and paragraph separators, which render as a line break', () => {
    for (const sep of ['\u2028', '\u2029']) {
      expect(refused({ name: `two${sep}lines` })).toEqual(['name']);
      expect(refused({ note: `two${sep}lines` })).toEqual([]);
    }
    expect(refused({ name: 'two\nlines' })).toEqual(['name']);
  });

  it('refuses the byte order mark U+FEFF, on one line or many', () => {
    expect(refused({ name: '\ufeffAda' })).toEqual(['name']);
    expect(refused({ note: 'a\ufeffnote' })).toEqual(['note']);
  });

  it('keeps control characters and bidi overrides out, line breaks and tabs in notes only', () => {
    expect(refused({ name: 'evil\u202egnp.exe', note: 'nul\u0000' })).toEqual(['name', 'note']);
    expect(refused({ note: 'line\r\nbreak\tand tab' })).toEqual([]);
  });

  it('accepts what people write: scripts, emoji sequences, subdivision flags (tag characters)', () => {
    const scotland = '\u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}';
    for (const name of ['Ada', 'Zoë', '👩‍💻 trader', scotland, '<b>markup</b>']) {
      expect(refused({ name })).toEqual([]);
    }
  });

  it('one line must show something', () => {
    expect(refused({ name: '\u200b\u200b' })).toEqual(['name']);
    expect(refused({ note: '' })).toEqual([]);
  });
});
