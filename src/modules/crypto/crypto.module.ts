import { Global, Module } from '@nestjs/common';
import { CryptoSandboxController } from './crypto-sandbox.controller.js';
import { CryptoController } from './crypto.controller.js';
import { CryptoService } from './crypto.service.js';

/** GET /crypto/prices, their history, POST /sandbox/crypto/{symbol}/price; the realtime hub hears their moves. */
@Global()
@Module({
  controllers: [CryptoController, CryptoSandboxController],
  providers: [CryptoService],
  exports: [CryptoService],
})
export class CryptoModule {}
