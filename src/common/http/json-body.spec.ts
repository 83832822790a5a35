import { describe, expect, it } from '@jest/globals';
import {
  MAX_JSON_VALUES,
  nestedTooDeep,
  poisoningKey,
  tooManyValues,
  unpairedSurrogateField,
} from './json-body.js';

describe('nestedTooDeep', () => {
  const deep = (n: number) => Buffer.from('['.repeat(n) + ']'.repeat(n));
  it('refuses nesting past the limit, whichever brackets open it', () => {
    expect(nestedTooDeep(deep(32), 32)).toBe(false);
    expect(nestedTooDeep(deep(33), 32)).toBe(true);
    expect(nestedTooDeep(Buffer.from('{"a":'.repeat(33) + '1' + '}'.repeat(33)), 32)).toBe(true);
    expect(nestedTooDeep(Buffer.from('{"a":['.repeat(17) + ']}'.repeat(17)), 32)).toBe(true);
  });

  it('counts no bracket inside a string, however many there are', () => {
    const quoted = Buffer.from(JSON.stringify({ note: '['.repeat(100) + '{'.repeat(100) }));
    expect(nestedTooDeep(quoted, 32)).toBe(false);
    // Many brackets side by side are not depth.
    expect(nestedTooDeep(Buffer.from(JSON.stringify(Array(100).fill([]))), 32)).toBe(false);
  });
});

describe('tooManyValues', () => {
  it('counts every value, containers included, against the cap', () => {
    expect(tooManyValues({ a: 1, b: [1, 2, { c: 'x' }] }, 7)).toBe(false);
    expect(tooManyValues({ a: 1, b: [1, 2, { c: 'x' }] }, 6)).toBe(true);
    expect(tooManyValues(Array(MAX_JSON_VALUES - 1).fill(0))).toBe(false);
    expect(tooManyValues(Array(MAX_JSON_VALUES).fill(0))).toBe(true);
    expect(tooManyValues('x', 1)).toBe(false);
  });

  it('sizes a container before visiting its children (an oversized body costs one look)', () => {
    const huge: unknown[] = Array(1_000_000).fill(0);
    Object.defineProperty(huge, 0, {
      get() {
        throw new Error('visited');
      },
    });
    expect(tooManyValues(huge)).toBe(true);
    const wide = { ...Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, {}])) };
    expect(tooManyValues(wide)).toBe(true);
  });
});

describe('unpairedSurrogateField', () => {
  const check = (text: string) => unpairedSurrogateField(text, JSON.parse(text));

  it('names the first string or key holding a lone surrogate', () => {
    expect(check('{"a":"ok","b":["x","\\ud800"]}')).toBe('b[1]');
    expect(check('{"orders":[{"client_order_id":"\\udfff"}]}')).toBe('orders[0].client_order_id');
    expect(check('{"\\ud83d":1}')).toBe('\ud83d');
    expect(check('"\\udc00"')).toBe('body');
  });

  it('passes paired surrogates and text that only looks like an escape', () => {
    expect(check('{"e":"\\ud83d\\ude00"}')).toBeNull();
    expect(check('{"e":"\\\\ud800"}')).toBeNull();
    expect(check('{"e":"plain"}')).toBeNull();
  });

  it('walks nothing when the text holds no surrogate escape', () => {
    const trap = {
      get a(): string {
        throw new Error('walked');
      },
    };
    expect(unpairedSurrogateField('{"a":"x"}', trap)).toBeNull();
  });
});

describe('poisoningKey', () => {
  it('finds __proto__ and constructor.prototype at any depth, and nothing else', () => {
    expect(poisoningKey(JSON.parse('{"__proto__":{"admin":true}}'))).toBe('__proto__');
    expect(poisoningKey(JSON.parse('{"a":[{"b":{"__proto__":1}}]}'))).toBe('__proto__');
    expect(poisoningKey(JSON.parse('{"constructor":{"prototype":{"x":1}}}'))).toBe('constructor');
    expect(poisoningKey(JSON.parse('[1,{"c":{"constructor":{"prototype":null}}}]'))).toBe(
      'constructor',
    );
    expect(poisoningKey(JSON.parse('{"constructor":"plain"}'))).toBeNull();
    expect(poisoningKey(JSON.parse('{"proto":1,"prototype":2}'))).toBeNull();
  });
});
