import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Ctx, type RequestContext } from '../../common/http/request-context.js';
import {
  MarketTradePageDto,
  MarketTradesQueryDto,
  OrderBookDto,
  OrderBookQueryDto,
} from './dto/book.dto.js';
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
    return this.markets.list(ctx.world, q);
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
    return this.markets.get(ctx.world, id);
  }

  @Get(':id/orderbook')
  @Endpoint({
    summary: 'Order book of a market (aggregated levels, YES cents)',
    description:
      "Readable without a key. With a test key the paper engine's book (house liquidity included); without a key or with a live key, the live engine's. One book per market in YES terms: bids are BUY YES at p and SELL NO at 100-p, asks SELL YES at p and BUY NO at 100-p; best first. depth: levels per side, 1..99 (default 10): 99 is the whole book.",
    auth: 'optional',
    scopes: ['markets:read'],
    type: OrderBookDto,
    errors: [400, 404],
  })
  orderbook(
    @Ctx() ctx: RequestContext,
    @Param('id') id: string,
    @Query() q: OrderBookQueryDto,
  ): OrderBookDto {
    return this.markets.orderbook(ctx.world, id, q.depth);
  }

  @Get(':id/trades')
  @Endpoint({
    summary: 'Trades of a market, newest first (cursor pagination)',
    description:
      "Readable without a key. With a test key the paper engine's trades; without a key or with a live key, the live engine's. Prices in YES cents; no account is disclosed.",
    auth: 'optional',
    scopes: ['markets:read'],
    type: MarketTradePageDto,
    errors: [400, 404],
  })
  trades(
    @Ctx() ctx: RequestContext,
    @Param('id') id: string,
    @Query() q: MarketTradesQueryDto,
  ): MarketTradePageDto {
    return this.markets.trades(ctx.world, id, q);
  }
}
