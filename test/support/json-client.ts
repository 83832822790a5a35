import { Agent, request, type IncomingHttpHeaders } from 'node:http';

/** What {@link jsonClient} answers: the status, the raw text and the parsed body (if JSON). */
export interface ClientResponse {
  status: number;
  /** Header names lower-cased, as node:http gives them. */
  headers: IncomingHttpHeaders;
  text: string;
  // Bodies are JSON of many shapes; tests read them field by field.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/**
 * A lean JSON client over node:http with kept-alive sockets, for tests that send thousands of
 * requests: fetch (undici) spends several times more CPU per request on its streams and
 * headers, and a test's client shares the process (and the two cores) with the app it calls.
 */
export function jsonClient(maxSockets: number) {
  const agent = new Agent({ keepAlive: true, maxSockets });
  const send = (
    url: string,
    method: string,
    headers: Record<string, string>,
    json?: unknown,
    timeoutMs = 10_000,
  ): Promise<ClientResponse> =>
    new Promise((resolve, reject) => {
      const payload = json === undefined ? undefined : Buffer.from(JSON.stringify(json));
      const req = request(
        url,
        {
          method,
          agent,
          timeout: timeoutMs,
          headers: {
            ...headers,
            ...(payload === undefined
              ? {}
              : { 'content-type': 'application/json', 'content-length': payload.length }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown;
            try {
              body = text === '' ? undefined : JSON.parse(text);
            } catch {
              body = undefined;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  return { send, close: () => agent.destroy() };
}
