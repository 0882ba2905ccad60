// The longer runs (npm run test:robustness; .ci/run runs it after npm test): the fuzzing
// with FUZZ_RUNS runs per property, mixed load, and the database outage on a mariadbd of
// the test's own. On SQLite always, on MySQL/MariaDB too when TEST_DATABASE_URL is set.
import config from './jest.config.js';

const e2e = config.projects.find((p) => p.displayName === 'e2e-sqlite');
const robust = (engine, testMatch) => ({ ...e2e, displayName: `robust-${engine}`, globals: { E2E_ENGINE: engine }, testMatch });
const load = ['<rootDir>/test/fuzz.e2e-spec.ts', '<rootDir>/test/robustness/load.robust-spec.ts'];

export default {
  testTimeout: 180_000,
  projects: [
    robust('sqlite', load),
    ...(process.env.TEST_DATABASE_URL ? [robust('mysql', load)] : []),
    // Starts and stops its own mariadbd: whatever the engine of the rest.
    { ...robust('mysql', ['<rootDir>/test/robustness/faults.robust-spec.ts']), displayName: 'robust-faults' },
  ],
};
