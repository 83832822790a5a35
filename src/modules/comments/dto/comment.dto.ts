import { AuthorDto } from '../../users/dto/author.dto.js';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto.js';
import {
  CodePointLength,
  OptionalField,
  PlainText,
  ShowsSomething,
} from '../../../common/validation/fields.js';
import type { CommentStatus, ReportReason } from '../comments.repository.js';

export const BODY_MAX = 2000;
export const NOTE_MAX = 500;
export const REPORT_REASONS: ReportReason[] = ['SPAM', 'ABUSE', 'OFF_TOPIC', 'OTHER'];
const STATUSES: CommentStatus[] = ['VISIBLE', 'HIDDEN', 'DELETED'];

const BODY_TEXT = `1..${BODY_MAX} characters counted as Unicode code points (an emoji is one; a combining mark is one of its own), showing at least one visible character; line breaks and tabs are allowed, other control characters, bidirectional overrides and the byte order mark (U+FEFF) are not. Returned exactly as stored: it is text, never markup.`;

export class CreateCommentDto {
  @ApiProperty({ description: BODY_TEXT, example: 'YES looks cheap at 40.' })
  @IsString()
  @CodePointLength(1, BODY_MAX)
  @PlainText({ multiline: true })
  @ShowsSomething()
  body: string;

  @ApiPropertyOptional({
    description:
      'Reply to this top-level comment of the same market (replies go one level deep). Unknown, malformed or of another market: 404 NOT_FOUND (details.parent_id).',
    example: 'cmt_01jd3x000000000000abcd',
  })
  @OptionalField()
  @IsString()
  parent_id?: string;
}

export class EditCommentDto {
  @ApiProperty({ description: BODY_TEXT })
  @IsString()
  @CodePointLength(1, BODY_MAX)
  @PlainText({ multiline: true })
  @ShowsSomething()
  body: string;
}

export class ReportCommentDto {
  @ApiProperty({ enum: REPORT_REASONS })
  @IsIn(REPORT_REASONS, { message: `reason must be one of ${REPORT_REASONS.join(', ')}` })
  reason: ReportReason;

  @ApiPropertyOptional({
    description: `0..${NOTE_MAX} characters (Unicode code points), line breaks allowed`,
  })
  @OptionalField()
  @IsString()
  @CodePointLength(0, NOTE_MAX)
  @PlainText({ multiline: true })
  note?: string;
}

export class CommentsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    description:
      "List this top-level comment's replies, oldest first, instead of the market's top-level comments (newest first). Unknown or of another market: 404 NOT_FOUND (details.parent_id).",
  })
  @OptionalField()
  @IsString()
  parent_id?: string;
}

export class CommentDto {
  @ApiProperty({ example: 'cmt_01jd3x000000000000abcd' }) id: string;
  @ApiProperty({ example: 'mkt_1a2b3c' }) market_id: string;
  @ApiProperty({ type: 'string', nullable: true, description: 'Set on a reply' })
  parent_id: string | null;
  @ApiProperty({ type: AuthorDto }) author: AuthorDto;
  @ApiProperty({
    type: 'string',
    nullable: true,
    description:
      'Exactly as posted. null when DELETED, and when HIDDEN for everyone but the author.',
  })
  body: string | null;
  @ApiProperty({
    enum: STATUSES,
    description: 'HIDDEN once 5 distinct users reported it; DELETED by its author',
  })
  status: CommentStatus;
  @ApiProperty({
    type: 'integer',
    description: 'Replies in its thread (deleted ones included: they stay listed)',
  })
  reply_count: number;
  @ApiPropertyOptional({
    type: 'integer',
    description: "Distinct users who reported it; present only on the author's own comments",
  })
  report_count?: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) edited_at: string | null;
  @ApiProperty({
    enum: ['live', 'test'],
    description: 'The world it lives in: test for test keys, live otherwise',
  })
  environment: 'live' | 'test';
}

export class CommentPageDto {
  @ApiProperty({ type: [CommentDto] }) data: CommentDto[];
  @ApiProperty({ type: 'string', nullable: true }) next_cursor: string | null;
}

export class CommentReportDto {
  @ApiProperty() comment_id: string;
  @ApiProperty({ enum: REPORT_REASONS }) reason: ReportReason;
  @ApiProperty({ type: 'string', nullable: true }) note: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}
