/**
 * Request signing for keys created with `signing_required: true` (TypeScript, Node >= 20, no
 * dependencies).
 *
 *   signed string = `<unix_ts>.<METHOD>.<path with query string>.` + the raw body bytes
 *   X-Svc-Timestamp: <unix_ts>
 *   X-Svc-Signature: v1=<hex HMAC-SHA256 of the signed string under the signing secret>
 *
 * The path is the request target exactly as sent, starting at /api/v1 and including the query
 * string (`/api/v1/markets?limit=1`). The body is hashed byte for byte: sign the exact string
 * you send, not an object you serialise again afterwards. The server accepts timestamps within
 * +/-300 s of its clock, and each signature once (a second use is 401 SIGNATURE_REPLAYED): sign
 * every request, retries included, afresh.
 *
 * Run it with tsx (on the project's Node 20, `npx tsx` fetches it from npm on first use; Node
 * >= 22.6 can run it with `node --experimental-strip-types` instead). Locally, the base URL is
 * http://127.0.0.1:3000 (`npm start`):
 *   SVC_BASE_URL=http://127.0.0.1:3000 SVC_API_KEY=svc_test_... \
 *   SVC_SIGNING_SECRET=svc_sign_... npx tsx examples/sign-request.ts GET '/api/v1/auth/me'
 */
import { createHmac } from 'node:crypto';
import { pathToFileURL } from 'node:url';

export interface SignInput {
  signingSecret: string;
  method: string;
  /** Path and query string exactly as sent, e.g. `/api/v1/markets?limit=1`. */
  pathWithQuery: string;
  /** The exact request body bytes; omit (or '') for requests without a body. */
  body?: string | Buffer;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
}

/** The two signing headers for one request. */
export function signatureHeaders(input: SignInput): Record<string, string> {
  const ts = String(input.timestamp ?? Math.floor(Date.now() / 1000));
  const hmac = createHmac('sha256', input.signingSecret);
  hmac.update(`${ts}.${input.method.toUpperCase()}.${input.pathWithQuery}.`, 'utf8');
  if (input.body !== undefined) hmac.update(input.body);
  return { 'X-Svc-Timestamp': ts, 'X-Svc-Signature': `v1=${hmac.digest('hex')}` };
}

export interface SignedRequest {
  baseUrl: string;
  apiKey: string;
  signingSecret: string;
  method: string;
  pathWithQuery: string;
  /** A JSON string, sent as it is (Content-Type: application/json). */
  body?: string;
  timestamp?: number;
}

/** Sends one signed request and returns the fetch Response. */
export function signedFetch(req: SignedRequest): Promise<Response> {
  const headers: Record<string, string> = {
    'X-API-Key': req.apiKey,
    ...signatureHeaders(req),
  };
  if (req.body !== undefined) headers['Content-Type'] = 'application/json';
  return fetch(new URL(req.pathWithQuery, req.baseUrl), {
    method: req.method.toUpperCase(),
    headers,
    body: req.body,
  });
}

async function main(argv: string[]): Promise<void> {
  const env = (name: string): string => {
    const v = process.env[name];
    if (v === undefined || v === '') throw new Error(`set ${name}`);
    return v;
  };
  const [method = 'GET', pathWithQuery = '/api/v1/auth/me', body] = argv;
  const res = await signedFetch({
    baseUrl: env('SVC_BASE_URL'),
    apiKey: env('SVC_API_KEY'),
    signingSecret: env('SVC_SIGNING_SECRET'),
    method,
    pathWithQuery,
    body,
  });
  console.log(`HTTP ${res.status}`);
  console.log(await res.text());
  if (!res.ok) process.exitCode = 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
