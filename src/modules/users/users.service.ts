import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, Repository } from 'typeorm';
import { ConfigService } from '../../config/config.service.js';
import { PLATFORM_DB } from '../../database/databases.js';
import { UserEntity, type Role } from './entities/user.entity.js';
import { freeGeneratedUsername } from './username.js';

@Injectable()
export class UsersService {
  readonly repo: Repository<UserEntity>;

  constructor(
    @InjectDataSource(PLATFORM_DB) db: DataSource,
    private readonly config: ConfigService,
  ) {
    this.repo = db.getRepository(UserEntity);
  }

  /**
   * The account's roles: those stored (the seeded demo admin's), and ADMIN for a verified
   * account whose email ADMIN_EMAILS names (how an operator makes admins where no demo account
   * is seeded, as on production). Removing an email from ADMIN_EMAILS takes the role back.
   */
  rolesOf(user: UserEntity): Role[] {
    const roles = storedRoles(user);
    if (
      !roles.includes('ADMIN') &&
      user.emailVerified &&
      this.config.values.adminEmails.includes(user.email)
    ) {
      roles.push('ADMIN');
    }
    // CREATOR (creating live markets) the same way, from CREATOR_EMAILS.
    if (
      !roles.includes('CREATOR') &&
      user.emailVerified &&
      this.config.values.creatorEmails.includes(user.email)
    ) {
      roles.push('CREATOR');
    }
    return roles;
  }

  /** Whether the user may create live markets (the CREATOR role). */
  isCreator(user: UserEntity): boolean {
    return this.rolesOf(user).includes('CREATOR');
  }

  /** Whether the user is an admin (`onceVerified`: as they would be with their email verified). */
  isAdmin(user: UserEntity, onceVerified = false): boolean {
    const roles = this.rolesOf(onceVerified ? { ...user, emailVerified: true } : user);
    return roles.includes('ADMIN') || roles.includes('SUPER_ADMIN');
  }

  byId(id: string): Promise<UserEntity | null> {
    return this.repo.findOneBy({ id });
  }

  byEmail(email: string): Promise<UserEntity | null> {
    return this.repo.findOneBy({ email: normalizeEmail(email) });
  }

  /**
   * A generated username no account holds now (`user_4f2a9c1e`), drawn at most
   * USERNAME_ATTEMPTS times. Two sign-ups may still draw the same one at once: the unique index
   * refuses the second insert, which then tries again.
   */
  freeUsername(): Promise<string> {
    return freeGeneratedUsername((name) => this.repo.existsBy({ username: name }));
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function storedRoles(user: UserEntity): Role[] {
  return user.roles === '' ? [] : (user.roles.split(',') as Role[]);
}
