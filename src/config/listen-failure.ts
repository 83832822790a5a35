import { isIP } from 'node:net';

/** Why the listening socket could not be opened, in words, by the error's code. */
const CAUSES: Record<string, string> = {
  EADDRINUSE: 'the port is in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'the host is not an address of this machine',
  ENOTFOUND: 'the host name does not resolve to an address',
  EAI_NONAME: 'the host name does not resolve to an address',
  EAI_FAIL: 'the host name could not be resolved',
  EAI_AGAIN: 'the host name could not be resolved (the name service did not answer)',
  EAFNOSUPPORT: "the host's address family is not supported on this machine",
};

/**
 * The one-line message for a failure to listen on HOST:PORT (a port in use, a host that is not
 * this machine's or does not resolve, no permission), naming both variables; null for an error
 * that is not such a failure (no system error code), which the caller rethrows.
 */
export function listenFailureMessage(err: unknown, host: string, port: number): string | null {
  if (!(err instanceof Error)) return null;
  const code = (err as NodeJS.ErrnoException).code;
  if (typeof code !== 'string' || !/^E(?!RR_)[A-Z0-9_]+$/.test(code)) return null;
  const where = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  const cause = CAUSES[code] ?? err.message;
  return `Cannot listen on ${where} (HOST=${host}, PORT=${port}): ${cause} (${code})`;
}
