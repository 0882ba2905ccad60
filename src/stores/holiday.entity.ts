import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * A holiday of the whole chain: on `date`, in each store's own calendar, the stores of `states`
 * keep `hours` instead of their weekday's, unless a special day or a closure of their own decides
 * the day. Written only through the catalogue's door (StoreCatalog.write), which bumps its version:
 * every instance's search index reloads with it.
 */
@Entity('holidays')
export class Holiday {
  /** YYYY-MM-DD: one holiday per date. */
  @PrimaryColumn({ type: 'varchar', length: 10 })
  date: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  /** `Closed`, or ranges as a weekday's hours. */
  @Column({ type: 'varchar', length: 200 })
  hours: string;

  /** The state codes it applies to, in order, comma-separated; empty: every store. */
  @Column({ type: 'varchar', length: 200 })
  states: string;

  @UpdateDateColumn({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
