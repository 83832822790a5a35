import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { validationFailed, type FieldError } from '../errors/domain-error.js';

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const e of errors) {
    const field = parent === '' ? e.property : `${parent}.${e.property}`;
    if (e.constraints !== undefined) {
      out.push({ field, message: Object.values(e.constraints).join('; ') });
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
