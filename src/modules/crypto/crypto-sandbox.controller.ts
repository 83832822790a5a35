import { Body, Controller, Param, Post } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import type { WorldName } from '../../common/environment.js';
import { World } from '../worlds/world.decorator.js';
import { CryptoPriceDto, SetCryptoPriceDto } from './dto/crypto.dto.js';
import { CryptoService } from './crypto.service.js';

@ApiTags('Sandbox')
@Controller('sandbox/crypto')
export class CryptoSandboxController {
  constructor(private readonly crypto: CryptoService) {}

  @Post(':symbol/price')
  @ApiBody({ type: SetCryptoPriceDto })
  @Endpoint({
    summary: "Set a paper world's crypto index price",
    description: `Sets the index (BTC-USD, ETH-USD or SOL-USD) of the key's paper world to price (a USD decimal string, at most 2 decimals, 0.01..9999999999.99) at once, as of that world's clock: the candles of its buckets take it, the realtime channel crypto:<symbol> of that world sends it, and the walk goes on from it. A test key sets the shared paper index (shared by every test key); an ephemeral world's key sets that world's index only (the paper index and other worlds never see it). That world's crypto markets whose close_time comes later resolve from it if it still stands then; the live index and live markets are never touched. 400 VALIDATION_FAILED for a bad price, 404 NOT_FOUND for an unknown symbol (details.symbol). Scope orders:write.`,
    auth: 'key',
    scopes: ['orders:write'],
    environment: 'sandbox-only',
    type: CryptoPriceDto,
    errors: [400, 404],
  })
  setPrice(
    @World() world: WorldName,
    @Param('symbol') symbol: string,
    @Body() body: SetCryptoPriceDto,
  ): CryptoPriceDto {
    return this.crypto.setPaperPrice(world, symbol, body.price);
  }
}
