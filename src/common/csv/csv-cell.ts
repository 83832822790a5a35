/**
 * A cell beginning with one of these is read as a formula by spreadsheets (OWASP "CSV
 * injection"): =, +, -, @, and tab or carriage return, which some of them skip before one.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV cell as every CSV the service writes spells it: null is empty; text that a spreadsheet
 * would run as a formula gets a leading ' (so "=HYPERLINK(...)" shows as text); then a cell
 * holding a quote, comma or line break is quoted, quotes doubled (RFC 4180). Numbers are the
 * service's own and stay numbers: only text can carry what a user typed, and prefixing a
 * negative number would turn it into text.
 */
export function csvCell(v: string | number | null): string {
  if (v === null) return '';
  const s = typeof v === 'number' ? String(v) : FORMULA_START.test(v) ? `'${v}` : v;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
