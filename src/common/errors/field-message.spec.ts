import { describe, expect, it } from '@jest/globals';
import { fieldMessage, validationDetails } from './domain-error.js';

describe('fieldMessage: one form, "<field> must ..."', () => {
  it('keeps a message already in the form, and names a nested field in full', () => {
    expect(fieldMessage('limit', 'limit must be an integer number')).toBe(
      'limit must be an integer number',
    );
    expect(fieldMessage('match.operation', 'operation must be a string')).toBe(
      'match.operation must be a string',
    );
    expect(fieldMessage('orders[0].price', 'must be integer')).toBe(
      'orders[0].price must be integer',
    );
  });

  it("rewords class-validator's and ajv's own phrasings", () => {
    expect(fieldMessage('colour', 'property colour should not exist')).toBe(
      'colour must not be sent (not a known field)',
    );
    expect(fieldMessage('colour', 'is not a known field')).toBe(
      'colour must not be sent (not a known field)',
    );
    expect(fieldMessage('price', 'is required')).toBe('price must be present');
    expect(fieldMessage('name', 'name should not be empty')).toBe('name must not be empty');
    expect(
      fieldMessage('events', 'each value in events must be one of the following values: a, b'),
    ).toBe('events must hold only values that are one of the following values: a, b');
    expect(fieldMessage('events', "All events's elements must be unique")).toBe(
      'events must not hold a value twice',
    );
    expect(fieldMessage('client_order_id', 'must NOT have more than 64 characters')).toBe(
      'client_order_id must not have more than 64 characters',
    );
  });

  it('keeps what any other wording says, after the form', () => {
    expect(fieldMessage('body', 'Price out of range')).toBe(
      'body must be valid: Price out of range',
    );
  });

  it('the answer message of a single field is that field message', () => {
    expect(validationDetails([{ field: 'price', message: 'is required' }]).message).toBe(
      'Invalid request: price must be present',
    );
  });
});
