import { Global, Module } from '@nestjs/common';
import { AuthorDirectory } from './author-directory.service.js';
import { UsersService } from './users.service.js';

@Global()
@Module({ providers: [UsersService, AuthorDirectory], exports: [UsersService, AuthorDirectory] })
export class UsersModule {}
