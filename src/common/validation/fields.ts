import { Transform } from 'class-transformer';
import { ValidateIf } from 'class-validator';

/**
 * An optional body or query field: when it is absent its validators are skipped, but `null` is
 * validated like any value (and so refused by IsString, IsArray, IsInt...). class-validator's own
 * IsOptional lets null through, which reached the services as a value they never expect.
 */
export function OptionalField(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}

/**
 * A query parameter that must be a plain decimal integer: "10" becomes 10, anything else ("0x10",
 * " 1", "1e3", "1.0") stays a string and fails IsInt with 400 VALIDATION_FAILED (Number() would
 * read "0x10" as 16 and "  1" as 1).
 */
export function DecimalIntegerQuery(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value,
  );
}
