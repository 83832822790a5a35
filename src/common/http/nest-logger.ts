import type { LoggerService } from '@nestjs/common';
import type { Logger } from 'pino';

const QUIET = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/** Nest's framework logs, written as structured JSON through the service's pino logger. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly pino: Logger) {}

  log(message: unknown, context?: string): void {
    // Nest's boot chatter (module and route mapping) is debug detail, not operational news.
    const level = context !== undefined && QUIET.has(context) ? 'debug' : 'info';
    this.pino[level]({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.pino.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.pino.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.pino.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.pino.trace({ context }, String(message));
  }
}
