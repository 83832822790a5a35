import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Every mail the service sends is written here first; SMTP delivery, when configured, follows. */
@Entity('mail_outbox')
export class OutboxMailEntity {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Column({ name: 'to_address', type: 'varchar', length: 320 })
  toAddress: string;

  @Column({ type: 'varchar', length: 40 })
  kind: string;

  @Column({ type: 'varchar', length: 300 })
  subject: string;

  @Column({ type: 'text' })
  body: string;

  @Column({ name: 'created_at', type: 'varchar', length: 30 })
  createdAt: string;

  @Column({ name: 'sent_at', type: 'varchar', length: 30, nullable: true })
  sentAt: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  error: string | null;
}
