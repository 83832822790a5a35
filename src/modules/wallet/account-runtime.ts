import type { Environment } from '../../common/environment.js';
import type { Credential } from '../../common/http/request-context.js';
import type { ConfigService } from '../../config/config.service.js';
import type { EngineRegistry } from '../trading/engine-registry.js';
import type { EngineRuntime } from '../trading/engine-runtime.js';

/** Balance a new account of the environment opens with: paper accounts start funded. */
export function startingBalance(config: ConfigService, env: Environment): number {
  return env === 'test' ? config.values.sandboxStartingBalanceCents : 0;
}

/**
 * The credential's engine, with the caller's trading account opened on first use (as
 * OrdersService.runtimeFor does): a paper account starts with SANDBOX_STARTING_BALANCE_CENTS
 * (one FUNDING row), a live account with 0.
 */
export function runtimeWithAccount(
  engines: EngineRegistry,
  config: ConfigService,
  c: Credential,
): EngineRuntime {
  const rt = engines.get(c.environment);
  rt.ensureAccount(c.userId, startingBalance(config, c.environment));
  return rt;
}
