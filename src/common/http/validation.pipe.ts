import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { validationFailed, type FieldError } from '../errors/domain-error.js';

/**
 * Constraints on what a value is: when one fails, the range and length rules after it say nothing
 * useful ("limit must not be greater than 200" for limit=abc), so only these are told.
 */
const TYPE_CONSTRAINTS = new Set([
  'isDefined',
  'isInt',
  'isNumber',
  'isString',
  'isBoolean',
  'isArray',
  'isObject',
  'isEnum',
  'isIn',
]);

function messageOf(constraints: Record<string, string>): string {
  const all = Object.entries(constraints);
  const types = all.filter(([k]) => TYPE_CONSTRAINTS.has(k));
  return (types.length > 0 ? types : all).map(([, m]) => m).join('; ');
}

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const e of errors) {
    const field = parent === '' ? e.property : `${parent}.${e.property}`;
    if (e.constraints !== undefined) {
      out.push({ field, message: messageOf(e.constraints) });
    }
    if (e.children !== undefined && e.children.length > 0) out.push(...flatten(e.children, field));
  }
  return out;
}

/** class-validator on DTOs; unknown fields are refused; failures become 400 VALIDATION_FAILED. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => validationFailed(flatten(errors)),
  });
}
