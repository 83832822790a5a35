/**
 * The API's name for an engine cancel reason. The service cancels by tag only for
 * cancel-on-disconnect (the tag is the API key id), so CONTRACT.md's CANCEL_ON_DISCONNECT is what
 * clients see for the engine's CANCEL_BY_TAG; every other reason passes through unchanged.
 */
export function apiCancelReason(reason: string | null): string | null {
  return reason === 'CANCEL_BY_TAG' ? 'CANCEL_ON_DISCONNECT' : reason;
}
