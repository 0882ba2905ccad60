import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import { fileURLToPath } from 'node:url';
import { DataSource } from 'typeorm';
import { serverConfig } from '../common/server.config.js';
import { databaseConfig } from '../database/database.config.js';
import { storesConfig } from '../stores/stores.config.js';
import { StoreImportService } from '../stores/store-import.service.js';
import { Store } from '../stores/store.entity.js';
import { ApiToken } from '../tokens/api-token.entity.js';
import { TokensService } from '../tokens/tokens.service.js';

export const DEMO_STORES_FILE = fileURLToPath(new URL('../../assets/demo-stores.csv', import.meta.url));
export const DEMO_TEAM = 'demo';

/**
 * First start on the embedded database: load the demo stores and issue one token for
 * team `demo`, printed once in the log, so `npm start` is usable at once. Never against
 * MySQL (contract §5), and never on a database that already has stores or tokens.
 */
@Injectable()
export class DemoSeedService implements OnApplicationBootstrap {
  private readonly logger = new Logger('DemoSeed');

  constructor(
    @Inject(serverConfig.KEY) private readonly server: ConfigType<typeof serverConfig>,
    @Inject(databaseConfig.KEY) private readonly database: ConfigType<typeof databaseConfig>,
    @Inject(storesConfig.KEY) private readonly stores: ConfigType<typeof storesConfig>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly importer: StoreImportService,
    private readonly tokens: TokensService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.database.DATABASE_URL || !this.stores.DEMO_SEED) return;
    const [stores, tokens] = await Promise.all([this.dataSource.getRepository(Store).count(), this.dataSource.getRepository(ApiToken).count()]);
    if (stores > 0 || tokens > 0) return;
    const summary = await this.importer.importFile(DEMO_STORES_FILE);
    const { token } = await this.tokens.create({ team: DEMO_TEAM, name: 'demo token (first start)' });
    // At warn level so that it shows however LOG_LEVEL is set (down to warn): it is never shown again.
    this.logger.warn(`Loaded ${summary.inserted} demo stores. Token for team "${DEMO_TEAM}", shown only this once:`);
    this.logger.warn(`  ${token}`);
    this.logger.warn(`Try: curl -H "Authorization: Bearer ${token}" http://localhost:${this.server.PORT}/plants`);
  }
}
