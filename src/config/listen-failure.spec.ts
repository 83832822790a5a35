import { describe, expect, it } from '@jest/globals';
import { listenFailureMessage } from './listen-failure.js';

function sysError(code: string, message = `listen ${code}`): Error {
  return Object.assign(new Error(message), { code });
}

describe('listenFailureMessage', () => {
  it.each([
    ['EADDRINUSE', 'the port is in use'],
    ['EACCES', 'permission denied (ports below 1024 need privileges)'],
    ['EADDRNOTAVAIL', 'the host is not an address of this machine'],
    ['ENOTFOUND', 'the host name does not resolve to an address'],
  ])('names HOST, PORT and the cause of %s in one line', (code, cause) => {
    expect(listenFailureMessage(sysError(code), '127.0.0.1', 3000)).toBe(
      `Cannot listen on 127.0.0.1:3000 (HOST=127.0.0.1, PORT=3000): ${cause} (${code})`,
    );
  });

  it('brackets an IPv6 host, and falls back to the system message for other codes', () => {
    expect(listenFailureMessage(sysError('EINVAL', 'listen EINVAL: bad'), '::1', 80)).toBe(
      'Cannot listen on [::1]:80 (HOST=::1, PORT=80): listen EINVAL: bad (EINVAL)',
    );
  });

  it('leaves errors that are not system errors to the caller', () => {
    expect(listenFailureMessage(new TypeError('a bug'), '127.0.0.1', 3000)).toBeNull();
    expect(listenFailureMessage('text', '127.0.0.1', 3000)).toBeNull();
    expect(listenFailureMessage(sysError('ERR_SERVER_ALREADY_LISTEN'), 'h', 1)).toBeNull();
  });
});
