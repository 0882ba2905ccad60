import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * A service of the chain (greenhouse, repotting, workshops, …): the vocabulary a store's
 * `services` and the search's filter name services by. Written only through the catalogue's door
 * (StoreCatalog.write), which bumps its version: every instance's search index reloads with it.
 */
@Entity('services')
export class Service {
  /** SERVICE_SLUG (shared/services.ts): the key stores and searches use. */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  slug: string;

  @Column({ type: 'varchar', length: 100 })
  label: string;

  @Column({ type: 'varchar', length: 500, nullable: true })
  description: string | null;

  @UpdateDateColumn({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
