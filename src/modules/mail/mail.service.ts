import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import nodemailer, { type Transporter } from 'nodemailer';
import type { DataSource } from 'typeorm';
import { Clock } from '../../common/clock/clock.js';
import { IdGenerator } from '../../common/ids/id-generator.js';
import { ConfigService } from '../../config/config.service.js';
import { PLATFORM_DB } from '../../database/databases.js';
import { OutboxMailEntity } from './entities/outbox-mail.entity.js';

export interface Mail {
  to: string;
  kind: string;
  subject: string;
  body: string;
}

const FROM = 'Sandbox Exchange <no-reply@sandbox.svc.example>';

/**
 * Writes every mail to the outbox table; when SMTP_URL is set, also sends it over SMTP and records
 * the outcome. Sending never fails the caller's request: the outbox row is the record.
 */
@Injectable()
export class MailService implements OnModuleDestroy {
  private readonly log = new Logger('Mail');
  private readonly transport: Transporter | null;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    @InjectDataSource(PLATFORM_DB) private readonly db: DataSource,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    config: ConfigService,
  ) {
    this.transport =
      config.values.smtpUrl === null ? null : nodemailer.createTransport(config.values.smtpUrl);
  }

  async send(mail: Mail): Promise<string> {
    const id = this.ids.next('mail');
    await this.db.getRepository(OutboxMailEntity).insert({
      id,
      toAddress: mail.to,
      kind: mail.kind,
      subject: mail.subject,
      body: mail.body,
      createdAt: this.clock.nowDate().toISOString(),
      sentAt: null,
      error: null,
    });
    if (this.transport !== null) {
      const p = this.deliver(id, mail).finally(() => this.pending.delete(p));
      this.pending.add(p);
    }
    return id;
  }

  private async deliver(id: string, mail: Mail): Promise<void> {
    const repo = this.db.getRepository(OutboxMailEntity);
    try {
      await this.transport!.sendMail({
        from: FROM,
        to: mail.to,
        subject: mail.subject,
        text: mail.body,
      });
      await repo.update({ id }, { sentAt: this.clock.nowDate().toISOString() });
    } catch (err) {
      const message = err instanceof Error ? err.message.slice(0, 500) : 'send failed';
      this.log.warn(`mail ${id} (${mail.kind}) not sent: ${message}`);
      await repo.update({ id }, { error: message }).catch(() => undefined);
    }
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled([...this.pending]);
    this.transport?.close();
  }
}
