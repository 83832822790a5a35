import { Injectable } from '@nestjs/common';
import type { AppConfig } from './app-config.js';
import type { ServiceSecrets } from './secrets.js';

/** The typed configuration, validated at boot; the only source of settings for the app. */
@Injectable()
export class ConfigService {
  constructor(
    readonly values: AppConfig,
    readonly secrets: ServiceSecrets,
  ) {}
}
