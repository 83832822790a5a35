import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import type { WorldName } from '../../common/environment.js';
import { World } from '../worlds/world.decorator.js';
import { CANDLE_RETENTION_DAYS } from './crypto-symbols.js';
import { CandlePageDto, CandleQueryDto, CryptoPriceListDto } from './dto/crypto.dto.js';
import { CryptoService } from './crypto.service.js';

const WORLD_TEXT =
  "Readable without a key, like GET /api/v1/markets (a key needs crypto:read). With a test key the paper engine's indices; with an ephemeral world's key (POST /sandbox/worlds) that world's own; without a key, with a live key or a session, the live engine's. Each engine walks its own BTC-USD, ETH-USD and SOL-USD: a seeded geometric random walk in integer cents (one step per multiple of CRYPTO_TICK_INTERVAL_MS on the service clock, default 1000; 0 stops it), the paper walk seeded from SANDBOX_FEED_SEED, the live one from a fixed seed. An ephemeral world's walk is seeded from the world's seed and steps only when the world's clock is advanced (POST /sandbox/clock with its key: one step per multiple of CRYPTO_TICK_INTERVAL_MS the world's offset crosses, at most 1000 per advance), never with the passing of time, so the same seed and the same requests give the same prices; its history is in the world's file and goes with it. Prices are USD decimal strings with 2 decimals.";

const RETENTION = `1m candles are kept ${CANDLE_RETENTION_DAYS['1m']} days, 1h ${CANDLE_RETENTION_DAYS['1h']} days, 1d ${CANDLE_RETENTION_DAYS['1d']} days (older ones are deleted as new buckets start).`;

@ApiTags('Crypto')
@Controller('crypto')
export class CryptoController {
  constructor(private readonly crypto: CryptoService) {}

  @Get('prices')
  @Endpoint({
    summary: 'Crypto reference index prices',
    description: `${WORLD_TEXT} One entry per index (BTC-USD, ETH-USD, SOL-USD, in that order) with its latest price and the service clock time it was set (as_of). Wrapped in data, like GET /indices.`,
    auth: 'optional',
    scopes: ['crypto:read'],
    type: CryptoPriceListDto,
  })
  prices(@World() world: WorldName): CryptoPriceListDto {
    return this.crypto.prices(world);
  }

  @Get('prices/:symbol/history')
  @Endpoint({
    summary: 'Candles of a crypto index, oldest first (keyset cursor)',
    description: `${WORLD_TEXT} Open/high/low/close of each bucket of interval (1m, 1h or 1d; default 1m) that saw a price (a walk step or a sandbox set); a bucket with none has no candle. time is the bucket start (a multiple of the interval since the Unix epoch, UTC). ${RETENTION} from (inclusive) and to (exclusive) narrow the buckets by start time: a date or a date-time with Z or an offset; with both, to must be after from and at most 366 days later (else 400 VALIDATION_FAILED naming to). An unknown interval is 400 naming interval; an unknown symbol 404 NOT_FOUND (details.symbol). Keyset cursor on the bucket start.`,
    auth: 'optional',
    scopes: ['crypto:read'],
    type: CandlePageDto,
    errors: [400, 404],
  })
  history(
    @World() world: WorldName,
    @Param('symbol') symbol: string,
    @Query() q: CandleQueryDto,
  ): CandlePageDto {
    return this.crypto.history(world, symbol, q);
  }
}
