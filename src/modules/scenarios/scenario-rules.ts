/**
 * What a scenario is and the rules of its body, as plain code: parsed and checked here, so the
 * service stores only valid scenarios and every refusal names its field.
 */
import { validationFailed, type FieldError } from '../../common/errors/domain-error.js';
import { MAX_ORDER_QUANTITY } from '../../engine/index.js';

export const MAX_TIMES = 1000;
export const MAX_DELAY_MS = 10_000;
export const MAX_RETRY_AFTER_SECONDS = 3600;
export const EFFECT_TYPES = [
  'REJECT',
  'PARTIAL_FILL',
  'DELAY',
  'RATE_LIMIT',
  'UNAVAILABLE',
  'DISCONNECT',
] as const;

export type ScenarioEffect =
  | { type: 'REJECT'; code: string }
  | { type: 'PARTIAL_FILL'; quantity: number }
  | { type: 'DELAY'; ms: number }
  | { type: 'RATE_LIMIT'; retry_after_seconds: number }
  | { type: 'UNAVAILABLE'; retry_after_seconds: number }
  | { type: 'DISCONNECT' };

export interface ScenarioMatch {
  /** `METHOD /path/{param}` as the OpenAPI document names the operation, without /api/v1. */
  operation: string;
  market_id: string | null;
  client_order_id_prefix: string | null;
}

export interface ScenarioInput {
  match: ScenarioMatch;
  effect: ScenarioEffect;
  times: number;
}

/** What the scenario rules need to know of an operation. */
export interface OperationFacts {
  /** The error codes it documents (x-error-codes). */
  codes: readonly string[];
  /** Whether it places one order from its body (PARTIAL_FILL shapes only such operations). */
  placesOrder: boolean;
}

/** The scenario operations themselves are never shaped: a client could lock itself out. */
export const SCENARIO_PATH = '/sandbox/scenarios';

const CLIENT_ORDER_ID_PREFIX = /^[A-Za-z0-9._:-]{1,64}$/;
const MARKET_ID_TEXT = /^[A-Za-z0-9_]{1,40}$/;

/**
 * Parses and checks a POST /sandbox/scenarios body; every problem is named (400
 * VALIDATION_FAILED, nothing created). `operations` tells what a named operation documents.
 */
export function parseScenario(
  body: unknown,
  operations: (name: string) => OperationFacts | undefined,
): ScenarioInput {
  const problems: FieldError[] = [];
  const bad = (field: string, message: string) => problems.push({ field, message });
  if (!isObject(body))
    throw validationFailed([{ field: 'body', message: 'body must be a JSON object' }]);
  unknownFields(body, ['match', 'effect', 'times'], '', bad);

  let facts: OperationFacts | undefined;
  let match: ScenarioMatch | null = null;
  if (!isObject(body.match)) bad('match', 'match must be an object with operation');
  else {
    const m = body.match;
    unknownFields(m, ['operation', 'market_id', 'client_order_id_prefix'], 'match.', bad);
    const operation = m.operation;
    if (typeof operation !== 'string') {
      bad('match.operation', 'match.operation must be a string such as "POST /orders"');
    } else if (operation.split(' ')[1]?.startsWith(SCENARIO_PATH)) {
      bad('match.operation', 'the scenario operations cannot be shaped by a scenario');
    } else {
      facts = operations(operation);
      if (facts === undefined) {
        bad(
          'match.operation',
          `no operation ${operation.slice(0, 100)}: name one as the OpenAPI document does, e.g. "POST /orders" or "DELETE /orders/{id}"`,
        );
      }
    }
    const marketId = optionalText(m, 'market_id', MARKET_ID_TEXT, 'a market id', bad);
    const prefix = optionalText(
      m,
      'client_order_id_prefix',
      CLIENT_ORDER_ID_PREFIX,
      '1 to 64 of A-Z a-z 0-9 . _ : -',
      bad,
    );
    if (typeof operation === 'string') {
      match = { operation, market_id: marketId, client_order_id_prefix: prefix };
    }
  }

  const effect = parseEffect(body.effect, facts, bad);
  let times = 1;
  if (body.times !== undefined) {
    if (!isIntIn(body.times, 1, MAX_TIMES))
      bad('times', `times must be an integer 1..${MAX_TIMES}`);
    else times = body.times;
  }
  if (problems.length > 0 || match === null || effect === null) throw validationFailed(problems);
  return { match, effect, times };
}

function parseEffect(
  raw: unknown,
  facts: OperationFacts | undefined,
  bad: (field: string, message: string) => void,
): ScenarioEffect | null {
  if (!isObject(raw)) {
    bad('effect', 'effect must be an object with type');
    return null;
  }
  const type = raw.type;
  const only = (fields: string[]) => unknownFields(raw, ['type', ...fields], 'effect.', bad);
  const int = (field: string, min: number, max: number, fallback?: number): number | null => {
    const v = raw[field];
    if (v === undefined && fallback !== undefined) return fallback;
    if (isIntIn(v, min, max)) return v;
    bad(`effect.${field}`, `effect.${field} must be an integer ${min}..${max}`);
    return null;
  };
  switch (type) {
    case 'REJECT': {
      only(['code']);
      const code = raw.code;
      if (typeof code !== 'string' || (facts !== undefined && !facts.codes.includes(code))) {
        bad(
          'effect.code',
          facts === undefined
            ? 'effect.code must be an error code the operation documents'
            : `effect.code must be an error code this operation documents: ${facts.codes.join(', ')}`,
        );
        return null;
      }
      return { type, code };
    }
    case 'PARTIAL_FILL': {
      only(['quantity']);
      if (facts !== undefined && !facts.placesOrder) {
        bad('effect.type', 'PARTIAL_FILL shapes an order placement (POST /orders) only');
      }
      const quantity = int('quantity', 1, MAX_ORDER_QUANTITY);
      return quantity === null ? null : { type, quantity };
    }
    case 'DELAY': {
      only(['ms']);
      const ms = int('ms', 1, MAX_DELAY_MS);
      return ms === null ? null : { type, ms };
    }
    case 'RATE_LIMIT':
    case 'UNAVAILABLE': {
      only(['retry_after_seconds']);
      const seconds = int(
        'retry_after_seconds',
        1,
        MAX_RETRY_AFTER_SECONDS,
        type === 'UNAVAILABLE' ? 1 : undefined,
      );
      return seconds === null ? null : { type, retry_after_seconds: seconds };
    }
    case 'DISCONNECT':
      only([]);
      return { type };
    default:
      bad('effect.type', `effect.type must be one of ${EFFECT_TYPES.join(', ')}`);
      return null;
  }
}

function optionalText(
  o: Record<string, unknown>,
  field: string,
  pattern: RegExp,
  what: string,
  bad: (field: string, message: string) => void,
): string | null {
  const v = o[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || !pattern.test(v)) {
    bad(`match.${field}`, `match.${field} must be ${what}`);
    return null;
  }
  return v;
}

function unknownFields(
  o: Record<string, unknown>,
  known: string[],
  prefix: string,
  bad: (field: string, message: string) => void,
): void {
  for (const k of Object.keys(o)) {
    if (!known.includes(k)) bad(`${prefix}${k}`, `property ${prefix}${k} should not exist`);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isIntIn(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= max;
}
