import { Global, Module } from '@nestjs/common';
import { AuthorDirectory } from './author-directory.service.js';
import { UserProfilesService } from './user-profiles.service.js';
import { UsersController } from './users.controller.js';
import { UsersService } from './users.service.js';

@Global()
@Module({
  controllers: [UsersController],
  providers: [UsersService, AuthorDirectory, UserProfilesService],
  exports: [UsersService, AuthorDirectory],
})
export class UsersModule {}
