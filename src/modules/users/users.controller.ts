import { Body, Controller, Get, Param, Patch } from '@nestjs/common';
import { ApiBody, ApiParam, ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { OwnProfileDto, PublicProfileDto, UpdateProfileDto } from './dto/profile.dto.js';
import { UserProfilesService } from './user-profiles.service.js';

@ApiTags('Users')
@Controller('users')
export class UsersController {
  constructor(private readonly profiles: UserProfilesService) {}

  @Get('me')
  @Endpoint({
    summary: 'Your account and profile',
    description:
      'The profile belongs to the account, not to a world: a test key reads the same profile as a live key or a session.',
    auth: 'key',
    scopes: ['users:read'],
    type: OwnProfileDto,
  })
  me(@Cred() c: Credential): Promise<OwnProfileDto> {
    return this.profiles.own(c.userId);
  }

  @Patch('me')
  @ApiBody({ type: UpdateProfileDto })
  @Endpoint({
    summary: 'Change your profile',
    description:
      'Send only the fields to change; all of them are applied or none (one invalid field refuses the whole body with 400 VALIDATION_FAILED naming it, and nothing changes). null clears display_name, bio and avatar_url; username and profile_visibility cannot be null. A username another account holds is 409 USERNAME_TAKEN (usernames are lower case, so unique ignoring case). PRIVATE hides the profile from GET /api/v1/users/{id_or_username} and from leaderboards. Test keys and env:paper keys get 403 TEST_KEY_LIVE_ENDPOINT: a public profile is changed with a live key or a session. Answers the whole profile as GET /api/v1/users/me does.',
    auth: 'key',
    scopes: ['users:write'],
    environment: 'real-money',
    type: OwnProfileDto,
    errors: [409],
    codes: { 409: ['USERNAME_TAKEN'] },
  })
  update(@Cred() c: Credential, @Body() body: UpdateProfileDto): Promise<OwnProfileDto> {
    return this.profiles.update(c.userId, body);
  }

  @Get(':id_or_username')
  @ApiParam({
    name: 'id_or_username',
    description: 'A user id (usr_...) or a username, ignoring case; an id is matched first',
  })
  @Endpoint({
    summary: "A user's public profile",
    description:
      'Readable without a key (a key needs users:read). Answers the public fields only, never the email. A PRIVATE profile is 404 NOT_FOUND exactly as an unknown user is (details.user names what was asked for).',
    auth: 'optional',
    scopes: ['users:read'],
    type: PublicProfileDto,
    errors: [404],
  })
  get(@Param('id_or_username') idOrUsername: string): Promise<PublicProfileDto> {
    return this.profiles.publicProfile(idOrUsername);
  }
}
