import { DomainError } from '../../common/errors/domain-error.js';

/** What a client is told to wait before retrying a command no writer took (a failover's gap). */
export const WRITER_RETRY_AFTER_SECONDS = 1;

/**
 * 503 WRITER_UNAVAILABLE with Retry-After: the world's engine writer could not be reached (none
 * elected yet, no answer within the forwarding timeout, Redis down) or was deposed while the
 * command ran. Nothing was committed by this attempt's writer after the answer, so the client
 * retries, with the same Idempotency-Key, after Retry-After.
 */
export class WriterUnavailableError extends DomainError {
  constructor(
    world: string,
    reason: string,
    /** The message as another instance worded it (a forwarded answer), else one from `reason`. */
    message = `The engine writer of this world is unavailable (${reason}); retry after Retry-After seconds with the same Idempotency-Key`,
  ) {
    super(
      'WRITER_UNAVAILABLE',
      message,
      { world },
      {
        'Retry-After': String(WRITER_RETRY_AFTER_SECONDS),
      },
    );
    this.name = 'WriterUnavailableError';
  }
}

/**
 * A commit refused by the fence (see fence.ts): another instance took the world over since this
 * one was elected, so this one is no longer its writer. The commit's transaction rolls back; the
 * runtime steps down and answers the command 503 WRITER_UNAVAILABLE (this error, if it escapes).
 */
export class FencedError extends WriterUnavailableError {
  constructor(
    world: string,
    readonly epoch: number,
  ) {
    super(world, `writer epoch ${epoch} was fenced off by a newer writer`);
    this.name = 'FencedError';
  }
}
