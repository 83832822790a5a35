import type { Logger } from '@nestjs/common';
import type { Environment } from '../environment.js';

/** How often the background timer catches the samplers up, in real milliseconds. */
const TICK_MS = 1000;

/**
 * Catches each environment's sampler up about once a second, on an unref'd timer (reads catch up
 * too, so a moved service clock is sampled before it is read), and at once when `atOnce`. An
 * error must not escape a timer (it would end the process): it is logged, and the next round or
 * read tries again.
 */
export function startSampling(
  log: Logger,
  what: string,
  catchUp: (env: Environment) => unknown,
  atOnce = false,
): NodeJS.Timeout {
  const tick = (): void => {
    for (const env of ['live', 'test'] as const) sampleNow(log, what, catchUp, env);
  };
  if (atOnce) tick();
  const timer = setInterval(tick, TICK_MS);
  timer.unref();
  return timer;
}

/**
 * One environment's catch-up now, its error logged (the next round tries again): what the timer
 * runs, and what a cluster writer's term start runs (EngineRegistry.onTermStart), so that a
 * restart's catch-up is done before its first request, as at once at boot on one instance.
 */
export function sampleNow(
  log: Logger,
  what: string,
  catchUp: (env: Environment) => unknown,
  env: Environment,
): void {
  try {
    catchUp(env);
  } catch (err) {
    log.warn(
      `sampling the ${env} ${what} failed: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
