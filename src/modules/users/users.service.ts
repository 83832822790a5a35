import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, Repository } from 'typeorm';
import { PLATFORM_DB } from '../../database/databases.js';
import { UserEntity, type Role } from './entities/user.entity.js';

@Injectable()
export class UsersService {
  readonly repo: Repository<UserEntity>;

  constructor(@InjectDataSource(PLATFORM_DB) db: DataSource) {
    this.repo = db.getRepository(UserEntity);
  }

  byId(id: string): Promise<UserEntity | null> {
    return this.repo.findOneBy({ id });
  }

  byEmail(email: string): Promise<UserEntity | null> {
    return this.repo.findOneBy({ email: normalizeEmail(email) });
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function rolesOf(user: UserEntity): Role[] {
  return user.roles === '' ? [] : (user.roles.split(',') as Role[]);
}

export function isAdmin(user: UserEntity): boolean {
  const roles = rolesOf(user);
  return roles.includes('ADMIN') || roles.includes('SUPER_ADMIN');
}
