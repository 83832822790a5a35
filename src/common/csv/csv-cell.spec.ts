import { describe, expect, it } from '@jest/globals';
import { csvCell } from './csv-cell.js';

describe('csvCell', () => {
  it.each([
    ['=HYPERLINK("http://x.test","y")', `"'=HYPERLINK(""http://x.test"",""y"")"`],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', `"'\rx"`],
  ])('prefixes text that a spreadsheet would run as a formula: %j', (input, cell) => {
    expect(csvCell(input)).toBe(cell);
  });

  it('leaves other text alone, quoting only quotes, commas and line breaks', () => {
    expect(csvCell('abc-1')).toBe('abc-1');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('x\ny')).toBe('"x\ny"');
    expect(csvCell('')).toBe('');
  });

  it('writes numbers as numbers, negative ones included, and null as an empty cell', () => {
    expect(csvCell(-5)).toBe('-5');
    expect(csvCell(42)).toBe('42');
    expect(csvCell(null)).toBe('');
  });
});
