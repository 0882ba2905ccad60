// npm run test:external: the e2e specs that start programs of their own (mariadbd, nats-server,
// prometheus) or make databases on the machine's PostgreSQL (EXTERNAL_SPECS in jest.config.js),
// on the embedded SQLite and, when TEST_DATABASE_URL is set, on MySQL or MariaDB, as they ran
// inside `npm test` before. .ci/run always runs it, right after `npm test`.
import config, { e2e, EXTERNAL_SPECS, ONE_ENGINE_SPECS } from './jest.config.js';

const project = (engine) => {
  const names = engine === 'mysql' ? EXTERNAL_SPECS.filter((name) => !ONE_ENGINE_SPECS.includes(name)) : EXTERNAL_SPECS;
  return {
    ...e2e(engine),
    displayName: `external-${engine}`,
    testMatch: names.map((name) => `<rootDir>/test/${name}.e2e-spec.ts`),
    testPathIgnorePatterns: ['/node_modules/'],
  };
};

export default {
  testTimeout: config.testTimeout,
  // One file at a time, as inside `npm test` before: these specs count what gets through in a time
  // window (events published before a kill, which of two requests ends first) while their programs
  // and the service share the cores; two of them side by side starve each other on two cores.
  maxWorkers: 1,
  projects: [project('sqlite'), ...(process.env.TEST_DATABASE_URL ? [project('mysql')] : [])],
};
