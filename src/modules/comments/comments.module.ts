import { Module } from '@nestjs/common';
import { CommentsController } from './comments.controller.js';
import { CommentStores } from './comments.repository.js';
import { CommentsService } from './comments.service.js';
import { PostCommentUseCase } from './use-cases/post-comment/post-comment.use-case.js';

/** Market comments: threads one level deep, reports, the reply notification, paper clean-up. */
@Module({
  controllers: [CommentsController],
  providers: [CommentStores, CommentsService, PostCommentUseCase],
})
export class CommentsModule {}
