import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type Write = (...args: unknown[]) => void;

/**
 * Fastify's per-request logger (`req.log`), made a pino child (with the request id) only when
 * something logs through it. The service writes its request lines from the pipeline's own hook
 * and almost never logs through `req.log`, yet Fastify built a child per request: about 1% of
 * the order path's CPU and a few objects per request.
 */
export class LazyRequestLogger {
  private made: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get real(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  fatal(...args: unknown[]): void {
    (this.real.fatal as Write)(...args);
  }

  error(...args: unknown[]): void {
    (this.real.error as Write)(...args);
  }

  warn(...args: unknown[]): void {
    (this.real.warn as Write)(...args);
  }

  info(...args: unknown[]): void {
    (this.real.info as Write)(...args);
  }

  debug(...args: unknown[]): void {
    (this.real.debug as Write)(...args);
  }

  trace(...args: unknown[]): void {
    (this.real.trace as Write)(...args);
  }

  silent(...args: unknown[]): void {
    (this.real.silent as Write)(...args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }

  isLevelEnabled(level: string): boolean {
    return (this.real as unknown as { isLevelEnabled(l: string): boolean }).isLevelEnabled(level);
  }
}

/** Fastify's `childLoggerFactory`: the request's logger, a child only once it is used. */
export function lazyRequestLogger(
  parent: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyRequestLogger(parent, bindings, options) as unknown as FastifyBaseLogger;
}
