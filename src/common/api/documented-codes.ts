import { ERROR_CODES, type ErrorCode } from '../errors/error-codes.js';

/** Every 401 answers one of these (the credential and signature checks); its text names none. */
const AUTHENTICATION_CODES: ErrorCode[] = [
  'UNAUTHENTICATED',
  'API_KEY_REVOKED',
  'API_KEY_EXPIRED',
  'SIGNATURE_REQUIRED',
  'SIGNATURE_INVALID',
  'SIGNATURE_TIMESTAMP_SKEW',
  'SIGNATURE_REPLAYED',
];

/**
 * The error codes an operation documents, from the descriptions of its error responses (by
 * status): each registered code a description names under its own status, plus the
 * authentication codes of a 401. `x-error-codes` in the OpenAPI document, and what a sandbox
 * scenario may answer with (REJECT).
 */
export function documentedCodes(descriptions: ReadonlyMap<number, string>): ErrorCode[] {
  const found = new Set<ErrorCode>();
  for (const [status, text] of descriptions) {
    if (status === 401) for (const c of AUTHENTICATION_CODES) found.add(c);
    for (const word of text.match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[A-Z]{4,}\b/g) ?? []) {
      if (word in ERROR_CODES && ERROR_CODES[word as ErrorCode] === status) {
        found.add(word as ErrorCode);
      }
    }
  }
  return [...found].sort();
}
