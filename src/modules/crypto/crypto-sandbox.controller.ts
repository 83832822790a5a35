import { Body, Controller, Param, Post } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { CryptoPriceDto, SetCryptoPriceDto } from './dto/crypto.dto.js';
import { CryptoService } from './crypto.service.js';

@ApiTags('Sandbox')
@Controller('sandbox/crypto')
export class CryptoSandboxController {
  constructor(private readonly crypto: CryptoService) {}

  @Post(':symbol/price')
  @ApiBody({ type: SetCryptoPriceDto })
  @Endpoint({
    summary: 'Set a paper crypto index price',
    description:
      'Paper indices are shared by every test key. Sets the paper index (BTC-USD, ETH-USD or SOL-USD) to price (a USD decimal string, at most 2 decimals, 0.01..9999999999.99) at once, as of the service clock: the candles of its buckets take it, the realtime channel crypto:<symbol> of the paper world sends it, and the walk goes on from it. Paper crypto markets whose close_time comes later resolve from it if it still stands then; the live index and live markets are never touched. 400 VALIDATION_FAILED for a bad price, 404 NOT_FOUND for an unknown symbol (details.symbol). Scope orders:write.',
    auth: 'key',
    scopes: ['orders:write'],
    environment: 'sandbox-only',
    type: CryptoPriceDto,
    errors: [400, 404],
  })
  setPrice(@Param('symbol') symbol: string, @Body() body: SetCryptoPriceDto): CryptoPriceDto {
    return this.crypto.setPaperPrice(symbol, body.price);
  }
}
