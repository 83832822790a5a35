import { describe, expect, it } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { webhookEventSchema } from './webhook-event-schemas.js';
import { WEBHOOK_EVENT_TYPES } from './webhook-outbox.service.js';
import { WEBHOOK_SAMPLES } from './webhook-samples.js';

const addFormats: FormatsPlugin =
  (addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  (addFormatsModule as unknown as FormatsPlugin);

/** Every object schema closed, so a sample field the schema does not describe fails. */
function closed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] =
      k === 'properties'
        ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, closed(s)]))
        : closed(v);
  }
  if (out.properties !== undefined) out.additionalProperties = false;
  return out;
}

describe('webhook samples', () => {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  addFormats(ajv);
  let n = 0;
  const context = {
    id: (prefix: string) => `${prefix}_sample${++n}`,
    endpointId: 'whe_x',
    now: Date.parse('2026-11-21T10:00:00.000Z'),
  };

  it.each(WEBHOOK_EVENT_TYPES.map((t) => [t]))(
    '%s: the sample, in its envelope, validates against the published schema',
    (type) => {
      const validate = ajv.compile(closed(webhookEventSchema(type)) as object);
      const event = {
        id: 'evt_1',
        type,
        created_at: '2026-11-21T10:00:00.000Z',
        schema_version: '2026-05-08',
        environment: 'test',
        data: WEBHOOK_SAMPLES[type](context),
      };
      expect(validate(event) ? [] : validate.errors).toEqual([]);
      // And the schema is not vacuous: a wrong type or a missing field fails.
      expect(validate({ ...event, type: 'other' })).toBe(false);
      expect(validate({ ...event, data: {} })).toBe(false);
    },
  );

  it('rfq.quote_accepted: the responder’s copy (no rfq object, so no requester) validates too; a mix of both copies does not', () => {
    const validate = ajv.compile(closed(webhookEventSchema('rfq.quote_accepted')) as object);
    const mine = WEBHOOK_SAMPLES['rfq.quote_accepted'](context) as {
      rfq: { id: string; market_id: string };
      quote: unknown;
      trade: unknown;
    };
    const envelope = (data: unknown) => ({
      id: 'evt_2',
      type: 'rfq.quote_accepted',
      created_at: '2026-11-21T10:00:00.000Z',
      schema_version: '2026-05-08',
      environment: 'test',
      data,
    });
    const theirs = {
      rfq_id: mine.rfq.id,
      market_id: mine.rfq.market_id,
      quote: mine.quote,
      trade: mine.trade,
    };
    expect(validate(envelope(theirs)) ? [] : validate.errors).toEqual([]);
    expect(validate(envelope({ ...theirs, rfq: mine.rfq }))).toBe(false);
    expect(validate(envelope({ ...mine, rfq_id: mine.rfq.id }))).toBe(false);
  });
});
