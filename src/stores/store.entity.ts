import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { numeric } from '../database/column-transformers.js';

export { WEEKDAYS, type Weekday } from '../shared/weekdays.js';

/** A store of the chain; `code` is its external key, the one imports upsert by. */
@Entity('stores')
@Index('ix_stores_lat_lng', ['lat', 'lng'])
export class Store {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Index('uq_stores_code', { unique: true })
  @Column({ type: 'varchar', length: 64 })
  code: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ type: 'varchar', length: 200 })
  address: string;

  @Column({ type: 'varchar', length: 100 })
  city: string;

  @Column({ type: 'varchar', length: 2 })
  state: string;

  @Column({ type: 'varchar', length: 10 })
  zip: string;

  @Column({ type: 'decimal', precision: 9, scale: 6, transformer: numeric })
  lat: number;

  @Column({ type: 'decimal', precision: 9, scale: 6, transformer: numeric })
  lng: number;

  @Column({ type: 'varchar', length: 200 }) monday: string;
  @Column({ type: 'varchar', length: 200 }) tuesday: string;
  @Column({ type: 'varchar', length: 200 }) wednesday: string;
  @Column({ type: 'varchar', length: 200 }) thursday: string;
  @Column({ type: 'varchar', length: 200 }) friday: string;
  @Column({ type: 'varchar', length: 200 }) saturday: string;
  @Column({ type: 'varchar', length: 200 }) sunday: string;

  /**
   * The IANA time zone whose wall clock the hours are in (America/Denver): given by the CSV's
   * optional `time_zone` column or the admin API, else the zone at the store's coordinates
   * (geo/time-zones.ts). Named as its CSV column, like every field an import compares and writes.
   */
  @Column({ name: 'time_zone', type: 'varchar', length: 64 })
  time_zone: string;

  /**
   * The days whose hours differ from the week, in shared/special-days.ts's text form
   * (`2026-12-24=9:00 AM - 2:00 PM; 2026-12-25=Closed`, by date; empty: none). TEXT here,
   * MEDIUMTEXT on MySQL (the migration): 400 days of long hours pass TEXT's 64 KB.
   */
  @Column({ name: 'special_hours', type: 'text' })
  special_hours: string;

  /** A temporary closure, `2027-01-04/2027-01-31` or `2027-01-04/..` (until further notice); empty: none. */
  @Column({ name: 'temporarily_closed', type: 'varchar', length: 32 })
  temporarily_closed: string;

  /** Contact fields (shared/contact-fields.ts): the phone in E.164 (`+19135550142`), the website and email as given; empty: none. */
  @Column({ type: 'varchar', length: 16 })
  phone: string;

  @Column({ type: 'varchar', length: 200 })
  website: string;

  @Column({ type: 'varchar', length: 254 })
  email: string;
  /** The chain's services the store offers, `curbside_pickup|delivery` (shared/services.ts: sorted, each once); empty: none. */
  @Column({ name: 'services', type: 'text' })
  services: string;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
