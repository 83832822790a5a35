import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { WorldName } from '../../common/environment.js';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Cred } from '../../common/http/credential.decorator.js';
import { Ctx, type Credential, type RequestContext } from '../../common/http/request-context.js';
import { World } from '../worlds/world.decorator.js';
import type { CommentView } from './comment-view.js';
import { CommentsService } from './comments.service.js';
import {
  CommentDto,
  CommentPageDto,
  CommentReportDto,
  CommentsQueryDto,
  CreateCommentDto,
  EditCommentDto,
  ReportCommentDto,
} from './dto/comment.dto.js';
import { PostCommentUseCase } from './use-cases/post-comment/post-comment.use-case.js';

const WORLD =
  'Comments live in the world of the credential: a test key reads and writes the paper world, a world key (POST /sandbox/worlds) its ephemeral world, a live key or a session the live world, and a request without a key reads the live world; a comment of the other world is unknown (404).';

@ApiTags('Comments')
@Controller()
export class CommentsController {
  constructor(
    private readonly comments: CommentsService,
    private readonly postComment: PostCommentUseCase,
  ) {}

  @Get('markets/:id/comments')
  @Endpoint({
    summary: "A market's comments, newest first, or one thread's replies, oldest first",
    description: `${WORLD} Without parent_id: the top-level comments, newest first; with parent_id: that comment's replies, oldest first. Both pages are keyset cursors on the comment id, so comments posted while paging neither repeat nor shift a page. Deleted comments stay listed (status DELETED, body null) so their replies stay reachable. Readable without a key; a key needs comments:read. 404 NOT_FOUND for an unknown market (details.market_id) or parent (details.parent_id).`,
    auth: 'optional',
    scopes: ['comments:read'],
    type: CommentPageDto,
    errors: [400, 404],
  })
  list(
    @Ctx() ctx: RequestContext,
    @World() world: WorldName,
    @Param('id') marketId: string,
    @Query() q: CommentsQueryDto,
  ): CommentPageDto {
    return this.comments.list(world, ctx.userId, marketId, q);
  }

  @Post('markets/:id/comments')
  @Endpoint({
    summary: 'Comment on a market, or reply to a comment',
    description: `${WORLD} Replies go one level deep: a reply to a reply is 422 COMMENT_THREAD_TOO_DEEP, a reply to a deleted comment 409 COMMENT_DELETED. A market resolved more than 30 days ago takes no new comments (422 MARKET_NOT_OPEN). A reply notifies the parent's author (COMMENT_REPLY), unless they reply to themselves. At most 10 comments a minute per user and world: all of the user's keys and sessions of one world share them, and the paper and live worlds count apart. Every attempt counts, as for every route limit: a refused one (400, 404, 409, 422) too. Over it: 429 RATE_LIMITED, details.limit_scope route.`,
    auth: 'key',
    scopes: ['comments:write'],
    status: 201,
    type: CommentDto,
    routeLimitPerMinute: 10,
    routeLimitPer: 'user',
    errors: [404, 409, 422],
    codes: { 409: ['COMMENT_DELETED'], 422: ['COMMENT_THREAD_TOO_DEEP', 'MARKET_NOT_OPEN'] },
  })
  create(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Param('id') marketId: string,
    @Body() body: CreateCommentDto,
  ): CommentView {
    return this.postComment.execute({
      world,
      userId: c.userId,
      marketId,
      body: body.body,
      parentId: body.parent_id,
    });
  }

  @Get('comments/:id')
  @Endpoint({
    summary: 'Get a comment',
    description: `${WORLD} Readable without a key; a key needs comments:read. report_count is shown to the author only, and so is the body of a HIDDEN comment. A comment a sandbox reset removed (its author's paper reply, or a comment nobody else replied to) is unknown (404), even where a COMMENT_REPLY notification still names it.`,
    auth: 'optional',
    scopes: ['comments:read'],
    type: CommentDto,
    errors: [404],
  })
  get(@Ctx() ctx: RequestContext, @World() world: WorldName, @Param('id') id: string): CommentView {
    return this.comments.get(world, ctx.userId, id);
  }

  @Patch('comments/:id')
  @Endpoint({
    summary: 'Edit your comment (within 15 minutes of posting)',
    description: `${WORLD} Its author only (else 403 NOT_COMMENT_AUTHOR), up to 15 minutes after created_at inclusive (else 409 COMMENT_EDIT_WINDOW_CLOSED); sets edited_at. A deleted comment is 409 COMMENT_DELETED.`,
    auth: 'key',
    scopes: ['comments:write'],
    type: CommentDto,
    errors: [404, 409],
    codes: { 403: ['NOT_COMMENT_AUTHOR'], 409: ['COMMENT_EDIT_WINDOW_CLOSED', 'COMMENT_DELETED'] },
  })
  edit(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Param('id') id: string,
    @Body() body: EditCommentDto,
  ): CommentView {
    return this.comments.edit(world, c.userId, id, body.body);
  }

  @Delete('comments/:id')
  @Endpoint({
    summary: 'Delete your comment',
    description: `${WORLD} Its author only (else 403 NOT_COMMENT_AUTHOR). The comment stays as a tombstone (status DELETED, body null) and its replies stay. Deleting a deleted comment again answers 204 and changes nothing, so a retried DELETE is safe and answers the same. (A watchlist's DELETE differs: the list is gone, and a second DELETE answers 404.)`,
    auth: 'key',
    scopes: ['comments:write'],
    status: 204,
    responseDescription: 'Deleted (or already deleted)',
    errors: [404],
    codes: { 403: ['NOT_COMMENT_AUTHOR'] },
  })
  remove(@Cred() c: Credential, @World() world: WorldName, @Param('id') id: string): void {
    this.comments.remove(world, c.userId, id);
  }

  @Post('comments/:id/report')
  @Endpoint({
    summary: 'Report a comment',
    description: `${WORLD} One report per user and comment (a second is 409 ALREADY_REPORTED); once 5 distinct users reported it, the comment is HIDDEN: its body is null for everyone but its author. Your own comment cannot be reported (422 CANNOT_REPORT_OWN_COMMENT), nor a deleted one (409 COMMENT_DELETED).`,
    auth: 'key',
    scopes: ['comments:write'],
    status: 202,
    type: CommentReportDto,
    errors: [404, 409, 422],
    codes: { 409: ['ALREADY_REPORTED', 'COMMENT_DELETED'], 422: ['CANNOT_REPORT_OWN_COMMENT'] },
  })
  report(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Param('id') id: string,
    @Body() body: ReportCommentDto,
  ): CommentReportDto {
    return this.comments.report(world, c.userId, id, body);
  }
}
