import { ConsoleLogger } from '@nestjs/common';
import { Store } from '../src/stores/store.entity.js';
import { ApiToken } from '../src/tokens/api-token.entity.js';
import { bearer, createTestApp, createTestDatabase, engine } from './support/test-app.js';

/** Keeps what the app logs, to find the printed token. */
class CapturingLogger extends ConsoleLogger {
  readonly lines: string[] = [];
  log(message: unknown) {
    this.lines.push(String(message));
  }
  warn(message: unknown) {
    this.lines.push(String(message));
  }
}

describe('first start', () => {
  if (engine === 'sqlite') {
    it('on the embedded database loads the demo stores and prints a demo token once', async () => {
      const database = await createTestDatabase();
      try {
        const logger = new CapturingLogger();
        const first = await createTestApp({ database, env: { DEMO_SEED: 'true' }, logger });
        const token = logger.lines.join('\n').match(/pst_[0-9A-Za-z]{49}/)?.[0];
        expect(token).toBeDefined();
        await expect(first.dataSource.getRepository(Store).count()).resolves.toBeGreaterThanOrEqual(200);
        await expect(first.dataSource.getRepository(ApiToken).find()).resolves.toMatchObject([{ team: 'demo' }]);
        const res = await first.http
          .post('/locations/nearest')
          .set(bearer(token!))
          .send({ customer_address: { zip: '10001' } });
        expect(res.status).toBe(200);
        expect(res.body.locations.length).toBeGreaterThan(0);
        await first.close();

        const again = new CapturingLogger();
        const second = await createTestApp({ database, env: { DEMO_SEED: 'true' }, logger: again });
        expect(again.lines.join('\n')).not.toMatch(/pst_/);
        await expect(second.dataSource.getRepository(ApiToken).count()).resolves.toBe(1);
        await second.close();
      } finally {
        await database.drop();
      }
    });
  } else {
    it('on MySQL creates nothing, even with DEMO_SEED=true', async () => {
      const logger = new CapturingLogger();
      const app = await createTestApp({ env: { DEMO_SEED: 'true' }, logger });
      try {
        await expect(app.dataSource.getRepository(Store).count()).resolves.toBe(0);
        await expect(app.dataSource.getRepository(ApiToken).count()).resolves.toBe(0);
        expect(logger.lines.join('\n')).not.toMatch(/pst_/);
      } finally {
        await app.close();
      }
    });
  }
});
