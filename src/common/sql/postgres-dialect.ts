/**
 * The service's SQL is written once, in the subset SQLite and PostgreSQL both accept; what
 * differs is only the parameter syntax and a few spellings that can be rewritten without knowing
 * the statement. `toPostgres` does exactly those mechanical rewrites, nothing that needs a
 * table's shape (an upsert's conflict target, date functions, boolean comparisons are written
 * portably in the statement itself: see docs/sections/pgdialect.md).
 *
 * Pure and deterministic, so callers cache the result by the SQLite text.
 */
export interface PostgresSql {
  /** The statement for PostgreSQL, parameters as $1..$n. */
  readonly text: string;
  /**
   * `names[i]` is the named parameter (`@x`, `:x` or `$x`, written without its sigil) bound to
   * $(i+1); a name used twice is one parameter. Null when the statement's parameters are
   * positional `?` (bound in order) or it has none.
   */
  readonly names: readonly string[] | null;
}

const WORD = /[A-Za-z0-9_]/;
const NAME_START = /[A-Za-z_]/;
const JSON_EACH = 'json_array_elements_text';

/** One statement of the text as scanned: its PostgreSQL text and where its pieces are. */
interface Scanned {
  text: string;
  /** Offset in `text` of a top-level RETURNING keyword, if any. */
  returningAt: number;
}

/** SQLite SQL -> PostgreSQL text and parameter order. Throws on syntax it cannot carry over. */
export function toPostgres(sql: string): PostgresSql {
  const names: string[] = [];
  const index = new Map<string, number>();
  let positional = 0;
  const statements: Scanned[] = [];
  let out = '';
  let depth = 0;
  let returningAt = -1;
  let i = 0;
  const n = sql.length;

  const endStatement = () => {
    statements.push({ text: out, returningAt });
    out = '';
    depth = 0;
    returningAt = -1;
  };

  while (i < n) {
    const c = sql[i];
    const next = i + 1 < n ? sql[i + 1] : '';
    if (c === "'" || c === '"') {
      // A string literal or a quoted identifier: copied whole, a doubled quote is an escape.
      let j = i + 1;
      for (;;) {
        if (j >= n) throw new Error(`toPostgres: unterminated ${c} in: ${sql}`);
        if (sql[j] === c) {
          if (sql[j + 1] === c) {
            j += 2;
            continue;
          }
          break;
        }
        j++;
      }
      out += sql.slice(i, j + 1);
      i = j + 1;
    } else if (c === '`') {
      // SQLite's MySQL-style identifier quote is PostgreSQL's double quote.
      const j = sql.indexOf('`', i + 1);
      if (j < 0) throw new Error(`toPostgres: unterminated \` in: ${sql}`);
      out += `"${sql.slice(i + 1, j).replaceAll('"', '""')}"`;
      i = j + 1;
    } else if (c === '-' && next === '-') {
      const j = sql.indexOf('\n', i);
      const end = j < 0 ? n : j;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '/' && next === '*') {
      const j = sql.indexOf('*/', i + 2);
      if (j < 0) throw new Error(`toPostgres: unterminated comment in: ${sql}`);
      out += sql.slice(i, j + 2);
      i = j + 2;
    } else if (c === ':' && next === ':') {
      // A PostgreSQL cast, written in a per-dialect branch: never a parameter.
      out += '::';
      i += 2;
    } else if (c === '?') {
      if (/[0-9]/.test(next)) throw new Error(`toPostgres: numbered ?NNN parameters: ${sql}`);
      if (names.length > 0) throw new Error(`toPostgres: named and ? parameters mixed: ${sql}`);
      positional++;
      out += `$${positional}`;
      i++;
    } else if ((c === '@' || c === ':' || c === '$') && NAME_START.test(next)) {
      // Only where a parameter can start: not the tail of a word (`a:b` is not SQL we write).
      if (i > 0 && WORD.test(sql[i - 1])) throw new Error(`toPostgres: ${c} inside a word: ${sql}`);
      let j = i + 1;
      while (j < n && WORD.test(sql[j])) j++;
      const name = sql.slice(i + 1, j);
      if (positional > 0) throw new Error(`toPostgres: named and ? parameters mixed: ${sql}`);
      let k = index.get(name);
      if (k === undefined) {
        names.push(name);
        k = names.length;
        index.set(name, k);
      }
      out += `$${k}`;
      i = j;
    } else if (c === '$' && /[0-9]/.test(next)) {
      throw new Error(`toPostgres: $N parameters are PostgreSQL's own, write ? or @name: ${sql}`);
    } else if (NAME_START.test(c) && (i === 0 || !WORD.test(sql[i - 1]))) {
      let j = i + 1;
      while (j < n && WORD.test(sql[j])) j++;
      const word = sql.slice(i, j);
      if (depth === 0 && word.toUpperCase() === 'RETURNING') returningAt = out.length;
      // A set of ids travels as one JSON array parameter: `IN (SELECT value FROM json_each(?))`.
      // PostgreSQL's json_array_elements_text yields the same `value` column (as text, so the
      // PREPARE check refuses it against a numeric column).
      out += word.toLowerCase() === 'json_each' && /^\s*\(/.test(sql.slice(j)) ? JSON_EACH : word;
      i = j;
    } else if (c === ';') {
      endStatement();
      i++;
    } else {
      if (c === '(') depth++;
      else if (c === ')') depth--;
      out += c;
      i++;
    }
  }
  endStatement();

  const texts = statements
    .map(rewriteStatement)
    .filter((s, k, all) => k < all.length - 1 || s.trim() !== '' || all.length === 1);
  return { text: texts.join(';'), names: names.length > 0 ? names : null };
}

const INSERT_OR_IGNORE = /^(\s*)INSERT\s+OR\s+IGNORE\s+INTO\b/i;

/** The mechanical per-statement rewrites, safe whatever the table. */
function rewriteStatement(s: Scanned): string {
  const m = INSERT_OR_IGNORE.exec(s.text);
  if (m === null) return s.text;
  // INSERT OR IGNORE skips a row any constraint refuses; PostgreSQL's target-less ON CONFLICT
  // DO NOTHING skips a row any unique constraint refuses (the only kind our OR IGNOREs meet).
  const head = `${m[1]}INSERT INTO`;
  const shift = head.length - m[0].length;
  const text = head + s.text.slice(m[0].length);
  const at = s.returningAt < 0 ? -1 : s.returningAt + shift;
  if (at >= 0) {
    return `${text.slice(0, at)}ON CONFLICT DO NOTHING ${text.slice(at)}`;
  }
  const body = text.trimEnd();
  return `${body} ON CONFLICT DO NOTHING${text.slice(body.length)}`;
}
