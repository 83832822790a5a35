import { describe, expect, it } from '@jest/globals';
import { documentedCodes } from './documented-codes.js';

describe('documentedCodes', () => {
  it('takes the registered codes each description names under their own status', () => {
    const codes = documentedCodes(
      new Map([
        [404, 'No such resource (NOT_FOUND); also NOT_FOUND (details.market_id): no market'],
        [422, 'Refused; also INSUFFICIENT_FUNDS, MARKET_NOT_OPEN and NOT_A_CODE'],
        // A code named under another status than its own is not this status's.
        [409, 'Conflict; see INSUFFICIENT_FUNDS'],
        [500, 'Unexpected error (INTERNAL)'],
      ]),
    );
    expect(codes).toEqual(['INSUFFICIENT_FUNDS', 'INTERNAL', 'MARKET_NOT_OPEN', 'NOT_FOUND']);
  });

  it('a 401 brings the authentication codes', () => {
    expect(documentedCodes(new Map([[401, 'Missing credential']]))).toEqual(
      expect.arrayContaining(['UNAUTHENTICATED', 'API_KEY_REVOKED', 'SIGNATURE_INVALID']),
    );
  });
});
