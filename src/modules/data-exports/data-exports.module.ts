import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { DataExportsController } from './data-exports.controller.js';
import { DataExportsService } from './data-exports.service.js';
import { ExportRunner } from './export-runner.service.js';

/** Historical data exports: jobs in each world's database, files under DATA_DIR/exports. */
@Module({
  imports: [WebhooksModule],
  controllers: [DataExportsController],
  providers: [DataExportsService, ExportRunner],
})
export class DataExportsModule {}
