import { describe, expect, it } from '@jest/globals';
import { DomainError } from '../../common/errors/domain-error.js';
import { toWsError, WS_CLOSE } from './ws-errors.js';

describe('toWsError: the error message and, while authenticating, the close code', () => {
  it('401-class errors close 4401, 403-class 4403, with the HTTP code and message', () => {
    const unauth = toWsError(new DomainError('UNAUTHENTICATED', 'no'), 'ws_1');
    expect(unauth.close).toBe(WS_CLOSE.UNAUTHENTICATED);
    expect(unauth.message).toEqual({ type: 'error', code: 'UNAUTHENTICATED', message: 'no' });
    const scope = toWsError(
      new DomainError('INSUFFICIENT_SCOPE', 'needs websocket', { required_scopes: ['websocket'] }),
      'ws_1',
    );
    expect(scope.close).toBe(WS_CLOSE.FORBIDDEN);
    expect(scope.message.details).toEqual({ required_scopes: ['websocket'] });
    expect(scope.unexpected).toBe(false);
  });

  it('an unexpected error closes 1011 (server error), not 4401, and hides its text', () => {
    const r = toWsError(new Error('database is locked'), 'ws_1');
    expect(r.close).toBe(1011);
    expect(r.unexpected).toBe(true);
    expect(r.message.code).toBe('INTERNAL');
    expect(r.message.message).not.toMatch(/database/);
  });

  it('a client mistake (400-class) names no close code: after auth the connection stays', () => {
    expect(toWsError(new DomainError('BAD_MESSAGE', 'bad'), 'ws_1').close).toBeNull();
  });
});
