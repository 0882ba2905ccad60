import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import { numeric } from '../database/column-transformers.js';

/**
 * A plant of one team. `id` is the caller's identifier, unique within the team: the
 * composite primary key is what makes a duplicate create fail, even under concurrency.
 */
@Entity('plants')
@Index('ix_plants_team_tag_id', ['team', 'tag', 'id'])
export class Plant {
  @PrimaryColumn({ type: 'varchar', length: 63 })
  team: string;

  @PrimaryColumn({ type: 'bigint', transformer: numeric })
  id: number;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  tag: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
