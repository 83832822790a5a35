import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, Repository } from 'typeorm';
import { Clock } from '../../common/clock/clock.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { ConfigService } from '../../config/config.service.js';
import { isUniqueViolation, PLATFORM_DB } from '../../database/databases.js';
import { TermsAcceptanceEntity } from './entities/terms-acceptance.entity.js';

export interface TermsStatus {
  version: string;
  required: boolean;
  accepted: boolean;
  accepted_at: string | null;
  binding: false;
  note: string;
}

/**
 * Developer terms (API_TERMS_VERSION). While DEVELOPER_TERMS_REQUIRED is on, key creation needs
 * an acceptance of the current version; a new version asks again.
 */
@Injectable()
export class TermsService {
  private readonly repo: Repository<TermsAcceptanceEntity>;

  constructor(
    @InjectDataSource(PLATFORM_DB) db: DataSource,
    private readonly config: ConfigService,
    private readonly clock: Clock,
  ) {
    this.repo = db.getRepository(TermsAcceptanceEntity);
  }

  async status(userId: string): Promise<TermsStatus> {
    const version = this.config.values.apiTermsVersion;
    const row = await this.repo.findOneBy({ userId, version });
    return {
      version,
      required: this.config.values.developerTermsRequired,
      accepted: row !== null,
      accepted_at: row?.acceptedAt ?? null,
      binding: false,
      note: 'Draft pending legal review; not a binding agreement.',
    };
  }

  async accept(userId: string, version: string): Promise<TermsStatus> {
    const current = this.config.values.apiTermsVersion;
    if (version !== current) {
      throw new DomainError(
        'TERMS_VERSION_NOT_CURRENT',
        `The current developer terms version is ${current}`,
        {
          current_version: current,
        },
      );
    }
    if ((await this.repo.findOneBy({ userId, version })) === null) {
      try {
        await this.repo.insert({ userId, version, acceptedAt: this.clock.nowDate().toISOString() });
      } catch (err) {
        // Accepted by a parallel request (on this instance or another) since the read: the first
        // acceptance stands, and this one answers the same status.
        if (!isUniqueViolation(err)) throw err;
      }
    }
    return this.status(userId);
  }

  async assertAccepted(userId: string): Promise<void> {
    if (!this.config.values.developerTermsRequired) return;
    const version = this.config.values.apiTermsVersion;
    if ((await this.repo.findOneBy({ userId, version })) === null) {
      throw new DomainError(
        'TERMS_ACCEPTANCE_REQUIRED',
        `Accept the developer terms version ${version} first (POST /api/v1/developer-terms/accept)`,
        { version },
      );
    }
  }
}
