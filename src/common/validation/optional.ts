import { ValidateIf } from 'class-validator';

/**
 * An optional body or query field: when it is absent its validators are skipped, but `null` is
 * validated like any value (and so refused by IsString, IsArray, IsInt...). class-validator's own
 * IsOptional lets null through, which reached the services as a value they never expect.
 */
export function OptionalField(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}
