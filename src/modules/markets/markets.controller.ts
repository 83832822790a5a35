import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Ctx, type RequestContext } from '../../common/http/request-context.js';
import { ListMarketsQueryDto, MarketDto, MarketPageDto } from './dto/market.dto.js';
import { MarketsService } from './markets.service.js';

@ApiTags('Markets')
@Controller('markets')
export class MarketsController {
  constructor(private readonly markets: MarketsService) {}

  @Get()
  @Endpoint({
    summary: 'List markets',
    description:
      "Readable without a key. With a test key the prices are the paper engine's; without a key or with a live key, the live engine's. Ordered by close_time, then id.",
    auth: 'optional',
    scopes: ['markets:read'],
    type: MarketPageDto,
    errors: [400],
  })
  list(@Ctx() ctx: RequestContext, @Query() q: ListMarketsQueryDto): Promise<MarketPageDto> {
    return this.markets.list(ctx.environment, q);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get a market',
    auth: 'optional',
    scopes: ['markets:read'],
    type: MarketDto,
    errors: [404],
  })
  get(@Ctx() ctx: RequestContext, @Param('id') id: string): Promise<MarketDto> {
    return this.markets.get(ctx.environment, id);
  }
}
