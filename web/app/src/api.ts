// The API client: JSON over fetch to the origin that serves the page, with the tab's test key.
// An error answer becomes an ApiError carrying the contract's message, shown to the user as is.

export const API = '/api/v1';

export interface FieldIssue {
  field: string;
  message?: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** The message, with the fields a 400 names. */
  get words(): string {
    const fields = (this.details.fields as FieldIssue[] | undefined) ?? [];
    const named = fields
      .map((f) => (f.message !== undefined ? `${f.field}: ${f.message}` : f.field))
      .join('; ');
    return named === '' || this.message.includes(named)
      ? this.message
      : `${this.message} (${named})`;
  }
}

export interface RequestOptions {
  body?: unknown;
  /** A session token instead of the key (minting the key). */
  token?: string;
  /** Another key than the current one (the tab's own key, managing its worlds). */
  key?: string;
  query?: Record<string, string | number | undefined>;
  /** Extra request headers (Idempotency-Key). */
  headers?: Record<string, string>;
}

let currentKey: string | null = null;

export function useKey(key: string | null): void {
  currentKey = key;
}

export async function request<T>(
  method: string,
  path: string,
  opts: RequestOptions = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  else if (opts.key !== undefined) headers['x-api-key'] = opts.key;
  else if (currentKey !== null) headers['x-api-key'] = currentKey;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) qs.set(k, String(v));
  const url = `${API}${path}${qs.size > 0 ? `?${qs.toString()}` : ''}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The service cannot be reached: check your connection');
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: reported below if it was an error
  }
  if (!res.ok) {
    const err = (
      parsed as { error?: { code?: string; message?: string; details?: Record<string, unknown> } }
    )?.error;
    throw new ApiError(
      res.status,
      err?.code ?? `HTTP_${res.status}`,
      err?.message ?? `The service answered ${res.status} ${res.statusText}`,
      err?.details ?? {},
    );
  }
  return parsed as T;
}

export const get = <T>(path: string, query?: RequestOptions['query']): Promise<T> =>
  request<T>('GET', path, { query });
export const post = <T>(
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<T> => request<T>('POST', path, { body, headers });
export const patch = <T>(path: string, body: unknown): Promise<T> =>
  request<T>('PATCH', path, { body });
export const del = <T>(path: string): Promise<T> => request<T>('DELETE', path);

/** Words for any failure: the API's message, else the error's own. */
export function describe(err: unknown): string {
  if (err instanceof ApiError) return err.words;
  return err instanceof Error ? err.message : String(err);
}
