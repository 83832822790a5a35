import { serviceUnavailable } from '../../errors/service-unavailable.js';
import type { DomainError } from '../../errors/domain-error.js';
import type { OperationInputs } from '../operation-inputs.js';
import type { ClusterGate } from './forward.stage.js';
import type { AccessPipeline } from '../../../modules/access/access.pipeline.js';
import type { IdempotencyService } from '../../../modules/access/idempotency.service.js';
import type { LimitsService } from '../../../modules/limits/limits.service.js';
import type { ScenarioGate } from '../../../modules/scenarios/scenario-gate.js';

/** Whether the service is stopping: shared by the pipeline, the drain deadline and main's hooks. */
export interface Lifecycle {
  /** Set once a graceful shutdown began: new requests are answered 503 SERVICE_UNAVAILABLE. */
  closing: boolean;
}

/** Services the stages call, resolved once Nest has built them (null until then). */
export interface PipelineServices extends Lifecycle {
  access: AccessPipeline | null;
  idempotency: IdempotencyService | null;
  limits: LimitsService | null;
  scenarios: ScenarioGate | null;
  /** What each documented operation takes, by `METHOD /route/:param` (see operationsOf). */
  operations: ReadonlyMap<string, OperationInputs> | null;
  /** Cluster mode (DATABASE_URL and REDIS_URL): forwarding to world writers; else null. */
  cluster: ClusterGate | null;
}

export function pipelineServices(): PipelineServices {
  return {
    access: null,
    idempotency: null,
    limits: null,
    scenarios: null,
    closing: false,
    operations: null,
    cluster: null,
  };
}

/** The answer to anything that arrives once a graceful shutdown began. */
export function shuttingDown(): DomainError {
  return serviceUnavailable('The service is shutting down; retry shortly');
}
