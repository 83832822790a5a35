import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Environment } from '../../common/environment.js';

@Entity('cancel_on_disconnect')
export class CancelOnDisconnectEntity {
  @PrimaryColumn({ name: 'key_id', type: 'varchar', length: 40 })
  keyId: string;

  @Column({ name: 'user_id', type: 'varchar', length: 40 })
  userId: string;

  @Column({ type: 'varchar', length: 4 })
  environment: Environment;

  @Column({ name: 'grace_seconds', type: 'integer' })
  graceSeconds: number;

  @Column({ name: 'enabled_at', type: 'varchar', length: 30 })
  enabledAt: string;
}
