import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('terms_acceptances')
export class TermsAcceptanceEntity {
  @PrimaryColumn({ name: 'user_id', type: 'varchar', length: 40 })
  userId: string;

  @PrimaryColumn({ type: 'varchar', length: 20 })
  version: string;

  @Column({ name: 'accepted_at', type: 'varchar', length: 30 })
  acceptedAt: string;
}
