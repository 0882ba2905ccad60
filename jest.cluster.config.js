// npm run test:cluster: the service on a 3-node MariaDB Galera cluster the test starts
// itself (test/support/galera.ts; needs mariadbd, galera-4 and rsync) plus Redis on
// TEST_REDIS_URL or 127.0.0.1:6379. Not part of `npm test`; .ci/run runs it on its own.
import config from './jest.config.js';

const e2e = config.projects.find((p) => p.displayName === 'e2e-sqlite');

export default {
  testTimeout: 600_000,
  projects: [{ ...e2e, displayName: 'cluster', globals: { E2E_ENGINE: 'mysql' }, testMatch: ['<rootDir>/test/cluster/*.cluster-spec.ts'] }],
};
