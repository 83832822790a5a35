import { Body, Controller, Param, Post } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { FinalResultDto, FinalScoreDto, MAX_SCORE } from './dto/sports.dto.js';
import { SportsService } from './sports.service.js';

@ApiTags('Sandbox')
@Controller('sandbox/sports')
export class SandboxSportsController {
  constructor(private readonly sports: SportsService) {}

  @Post('events/:id/final')
  @ApiBody({ type: FinalScoreDto })
  @Endpoint({
    summary: 'End a paper sports event with its final score',
    description: `Paper events are shared by every test key: this ends the event for all sandbox users (with a world key, in that ephemeral world only); the live world's event of the same id is not touched. home_score and away_score: integers 0..${MAX_SCORE}. The event becomes FINAL with its score and winner (HOME, AWAY or DRAW), and each linked paper market resolves by its rule through the same path as POST /api/v1/sandbox/markets/{id}/resolve (house quotes withdrawn, resting orders cancelled, holders paid 100 cents per winning contract as SETTLEMENT): HOME_WINS is YES on a home win and NO on an away win or a draw; AWAY_WINS the reverse; OVER_<n> YES when home + away is more than n. A linked market already RESOLVED is left as it is (resolved_now false). Markets resolve first and the event is recorded FINAL last, each committed before the answer: if the call fails midway, the event is still LIVE and the same call completes it. 409 SPORTS_EVENT_FINAL for an event already final; 422 SPORTS_EVENT_NOT_STARTED before start_time (on the service clock; with a world key, on the world's clock). A sandbox reset does not undo a final (events are the world's, not a user's). Scope orders:write.`,
    auth: 'key',
    scopes: ['orders:write'],
    environment: 'sandbox-only',
    type: FinalResultDto,
    errors: [400, 404, 409, 422],
    codes: {
      404: ['NOT_FOUND (details.event_id): no such paper event'],
      409: ['SPORTS_EVENT_FINAL (details.score): the event already has its final score'],
      422: ['SPORTS_EVENT_NOT_STARTED (details.start_time): before the start on the service clock'],
    },
  })
  final(
    @Cred() c: Credential,
    @Param('id') id: string,
    @Body() body: FinalScoreDto,
  ): FinalResultDto {
    return this.sports.final(id, body.home_score, body.away_score, c.userId, c.world);
  }
}
