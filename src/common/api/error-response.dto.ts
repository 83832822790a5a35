import { ApiProperty } from '@nestjs/swagger';

export class FieldErrorDto {
  @ApiProperty({ example: 'price' })
  field: string;

  @ApiProperty({ example: 'must be an integer between 1 and 99' })
  message: string;
}

export class ErrorDetailDto {
  @ApiProperty({ description: 'UPPER_SNAKE error code', example: 'VALIDATION_FAILED' })
  code: string;

  @ApiProperty({ description: 'Human-readable explanation' })
  message: string;

  @ApiProperty({ type: 'integer', description: 'The HTTP status, repeated', example: 400 })
  status: number;

  @ApiProperty({ description: 'Same as the X-Request-Id response header' })
  request_id: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'Code-specific details, e.g. fields (VALIDATION_FAILED), required_scopes (INSUFFICIENT_SCOPE), limit_scope and limit (RATE_LIMITED)',
  })
  details: Record<string, unknown>;
}

export class ErrorResponseDto {
  @ApiProperty({ type: ErrorDetailDto })
  error: ErrorDetailDto;
}
