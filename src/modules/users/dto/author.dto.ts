import { ApiProperty } from '@nestjs/swagger';
import type { AuthorView } from '../author-directory.service.js';

/** The OpenAPI shape of {@link AuthorView}: a person shown beside content, never the email. */
export class AuthorDto implements AuthorView {
  @ApiProperty({ example: 'usr_01jd3x000000000000abcd' })
  id: string;

  @ApiProperty({ example: 'user_4f2a9c1e' })
  username: string;

  @ApiProperty({ type: 'string', nullable: true, example: 'Ada' })
  display_name: string | null;
}
