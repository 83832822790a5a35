import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { FillDto, OrderDto } from './dto/order.dto.js';
import { ORDER_ANSWER_SCHEMA } from './order-schemas.js';

/** The properties @nestjs/swagger records for a DTO class, in declaration order. */
function documented(dto: { prototype: object }): string[] {
  const names = Reflect.getMetadata('swagger/apiModelPropertiesArray', dto.prototype) as string[];
  return names.map((n) => n.replace(/^:/, ''));
}

describe('ORDER_ANSWER_SCHEMA (the 201 serializer of POST /orders)', () => {
  // fast-json-stringify writes only the properties its schema lists: a field added to OrderDto
  // (the OpenAPI source) and not here would silently vanish from the answer.
  it('lists every OrderDto field, in the DTO order', () => {
    expect(Object.keys(ORDER_ANSWER_SCHEMA.properties)).toEqual(documented(OrderDto));
  });

  // A null given to a property whose schema does not take null is written as "" or 0.
  it('takes null exactly where OrderDto is nullable', () => {
    const nullableInDto = documented(OrderDto).filter(
      (name) =>
        (
          Reflect.getMetadata('swagger/apiModelProperties', OrderDto.prototype, name) as {
            nullable?: boolean;
          }
        ).nullable === true,
    );
    const nullableHere = Object.entries(ORDER_ANSWER_SCHEMA.properties)
      .filter(([, p]) => Array.isArray(p.type) && (p.type as readonly string[]).includes('null'))
      .map(([name]) => name);
    expect(nullableHere).toEqual(nullableInDto);
    expect(nullableHere.length).toBeGreaterThan(0);
  });

  it('lists every FillDto field of its fills, in the DTO order', () => {
    expect(Object.keys(ORDER_ANSWER_SCHEMA.properties.fills.items.properties)).toEqual(
      documented(FillDto),
    );
  });
});
