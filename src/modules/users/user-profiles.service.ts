import { Injectable } from '@nestjs/common';
import { DomainError } from '../../common/errors/domain-error.js';
import { isUniqueViolation } from '../../database/databases.js';
import type { OwnProfileDto, PublicProfileDto, UpdateProfileDto } from './dto/profile.dto.js';
import type { UserEntity } from './entities/user.entity.js';
import { UsersService } from './users.service.js';

/**
 * Profiles: the owner's view and changes (GET/PATCH /users/me) and the public view of an account
 * (GET /users/{id_or_username}). A profile belongs to the account, not to a world.
 */
@Injectable()
export class UserProfilesService {
  constructor(private readonly users: UsersService) {}

  async own(userId: string): Promise<OwnProfileDto> {
    return this.ownView(await this.account(userId));
  }

  /**
   * Applies every given field in one UPDATE, or none: the body was validated whole before, and
   * a username another account holds is refused by the unique index (409 USERNAME_TAKEN) with
   * nothing else changed, however many claim it at once.
   */
  async update(userId: string, patch: UpdateProfileDto): Promise<OwnProfileDto> {
    const changes = columnsOf(patch);
    if (Object.keys(changes).length > 0) {
      try {
        const done = await this.users.repo.update({ id: userId }, changes);
        if (done.affected === 0) throw gone();
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        throw new DomainError('USERNAME_TAKEN', `The username ${patch.username} is taken`, {
          username: patch.username,
        });
      }
    }
    return this.own(userId);
  }

  /**
   * A PUBLIC account by id or by username (ignoring case); an id is matched before a username.
   * A PRIVATE account is answered exactly as an unknown one, so its existence does not leak.
   */
  async publicProfile(idOrUsername: string): Promise<PublicProfileDto> {
    const key = idOrUsername.toLowerCase();
    const found = await this.users.repo.find({ where: [{ id: key }, { username: key }], take: 2 });
    const user = found.find((u) => u.id === key) ?? found[0];
    if (user === undefined || user.profileVisibility !== 'PUBLIC') {
      throw new DomainError('NOT_FOUND', `No user ${idOrUsername}`, { user: idOrUsername });
    }
    return publicView(user);
  }

  private async account(userId: string): Promise<UserEntity> {
    const user = await this.users.byId(userId);
    if (user === null) throw gone();
    return user;
  }

  private ownView(u: UserEntity): OwnProfileDto {
    return {
      id: u.id,
      email: u.email,
      email_verified: u.emailVerified,
      username: u.username,
      display_name: u.displayName,
      bio: u.bio,
      avatar_url: u.avatarUrl,
      profile_visibility: u.profileVisibility,
      roles: this.users.rolesOf(u),
      created_at: u.createdAt,
    };
  }
}

function publicView(u: UserEntity): PublicProfileDto {
  return {
    id: u.id,
    username: u.username,
    display_name: u.displayName,
    bio: u.bio,
    avatar_url: u.avatarUrl,
    created_at: u.createdAt,
  };
}

/** The columns a PATCH body sets; absent fields are left alone, null clears. */
function columnsOf(patch: UpdateProfileDto): Partial<UserEntity> {
  const out: Partial<UserEntity> = {};
  if (patch.username !== undefined) out.username = patch.username;
  if (patch.display_name !== undefined) out.displayName = patch.display_name;
  if (patch.bio !== undefined) out.bio = patch.bio;
  if (patch.avatar_url !== undefined) out.avatarUrl = patch.avatar_url;
  if (patch.profile_visibility !== undefined) out.profileVisibility = patch.profile_visibility;
  return out;
}

function gone(): DomainError {
  return new DomainError('UNAUTHENTICATED', 'The account no longer exists');
}
