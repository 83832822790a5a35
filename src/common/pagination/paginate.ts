import { decodeCursor, encodeCursor, type CursorKey, type Page } from './cursor.js';

export type { Page } from './cursor.js';

/** `?limit=` and `?cursor=` as every list takes them (validated by PageQueryDto). */
export interface PageRequest {
  limit?: number;
  cursor?: string;
}

/** How a page's rows are shown: one at a time, or all at once (one look-up for the page). */
export type PageMapper<Row, Out> = { map: (row: Row) => Out } | { mapPage: (rows: Row[]) => Out[] };

/** One keyset-paginated list: its cursor name and key kinds, how to read rows and show them. */
export type PageSpec<Row, Out, Rows extends Row[] | Promise<Row[]>> = PageSource<Row, Rows> &
  PageMapper<Row, Out>;

/** Where a list's rows come from and how its cursor is made. */
export interface PageSource<Row, Rows extends Row[] | Promise<Row[]>> {
  /** The name the cursor is bound to (`orders:<environment>`, `markets`, ...): never rename one, issued cursors would be refused. */
  list: string;
  /**
   * Names this list was issued under before (a rename must not strand the cursors clients hold):
   * a cursor of one of them is read as this list's. Only for a former name whose positions mean
   * the same here.
   */
  legacyLists?: readonly string[];
  /** What each cursor key is, in the order keyOf gives them. */
  keys: readonly CursorKey[];
  query: PageRequest;
  /** Up to `take` rows strictly after `after` (the last row of the previous page) in list order; undefined: from the start. */
  fetch: (after: string[] | undefined, take: number) => Rows;
  /** The sort keys of a row, as the next page's `after`. */
  keyOf: (row: Row) => string[];
}

const DEFAULT_LIMIT = 50;

/**
 * A page of a list whose rows are read synchronously (better-sqlite3 statements, the engine).
 * The cursor is decoded before `fetch` runs, so a cursor of another list is 400 VALIDATION_FAILED
 * and reads nothing. One row past the limit is fetched to know whether another page exists.
 */
export function paginate<Row, Out>(spec: PageSpec<Row, Out, Row[]>): Page<Out> {
  const { after, limit } = start(spec);
  return finish(spec, spec.fetch(after, limit + 1), limit);
}

/** {@link paginate} for a list read through TypeORM (an awaited query). */
export async function paginateAsync<Row, Out>(
  spec: PageSpec<Row, Out, Promise<Row[]>>,
): Promise<Page<Out>> {
  const { after, limit } = start(spec);
  return finish(spec, await spec.fetch(after, limit + 1), limit);
}

function start({
  list,
  legacyLists,
  keys,
  query,
}: Pick<PageSource<never, never[]>, 'list' | 'legacyLists' | 'keys' | 'query'>) {
  const after =
    query.cursor === undefined ? undefined : decodeCursor(query.cursor, list, keys, legacyLists);
  return { after, limit: query.limit ?? DEFAULT_LIMIT };
}

function finish<Row, Out>(
  spec: PageSpec<Row, Out, Row[] | Promise<Row[]>>,
  rows: Row[],
  limit: number,
): Page<Out> {
  const page = rows.slice(0, limit);
  // The next page starts after the last row shown, whatever was inserted meanwhile.
  const last = rows.length > limit ? page[page.length - 1] : undefined;
  return {
    data: show(spec, page),
    next_cursor: last === undefined ? null : encodeCursor(spec.list, spec.keyOf(last)),
  };
}

function show<Row, Out>(mapper: PageMapper<Row, Out>, rows: Row[]): Out[] {
  return 'mapPage' in mapper ? mapper.mapPage(rows) : rows.map(mapper.map);
}
