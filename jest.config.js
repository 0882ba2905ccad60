import { availableParallelism } from 'node:os';

// Jest runs in native ESM mode (node --experimental-vm-modules): NestJS 12 packages are
// ESM-only and Jest's own CommonJS module runtime cannot require() them. TypeScript is
// compiled by SWC (@swc/jest: ES modules under --experimental-vm-modules, legacy decorators with
// their design-type metadata, which Nest's injection and TypeORM's columns read, and class fields
// as tsc makes them with useDefineForClassFields false); type checking is `npm run lint`'s. SWC
// compiles a file in a small fraction of ts-jest's time (docs/development.md, Test run times).
const swc = {
  swcrc: false,
  jsc: {
    target: 'es2023',
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    keepClassNames: true,
  },
  sourceMaps: 'inline',
};
const base = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['@swc/jest', swc] },
  testEnvironment: '<rootDir>/test/support/environment.js',
};

/**
 * Specs that start programs of their own (mariadbd, nats-server, redis-server, prometheus) or make databases
 * on the machine's PostgreSQL, and spend most of their time waiting on them: `npm run
 * test:external` (jest.external.config.js) runs them, and .ci/run always does, right after
 * `npm test`, which leaves them out so that it stays a run one can wait for. A new spec that
 * needs such a program goes on this list.
 */
export const EXTERNAL_SPECS = [
  'database-tls',
  'drive-times',
  'events',
  'events-cluster',
  'events-faults',
  'events-handover',
  'events-publisher',
  'events-stream',
  'geocoder',
  'least-privilege',
  'multi-instance',
  'outage',
  'prometheus',
  'roads',
];
// Specs that start a MariaDB of their own, or that use no database (the build; the bad settings,
// which stop the service before it connects; the OpenAPI document, read from a file) test the same
// thing under either engine: they run in the SQLite project only.
export const ONE_ENGINE_SPECS = [
  'database-tls',
  'least-privilege',
  'build',
  'config',
  'events-cluster',
  'events-publisher',
  'events-stream',
  'openapi',
  'roads',
];
const paths = (names) => names.map((name) => `/test/${name}\\.e2e-spec\\.ts$`);

// The e2e suite runs against the embedded SQLite default always, and against MySQL or
// MariaDB too when TEST_DATABASE_URL points at a server (each test file gets a fresh
// database there). The CLI tests run the built command line, hence the build first.
// Medium specs (test/medium/*.medium-spec.ts) call one service, built from its real module,
// on the same fresh databases: they run in both projects too.
export const e2e = (engine) => ({
  ...base,
  displayName: `e2e-${engine}`,
  rootDir: '.',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.e2e-spec.ts', '**/*.medium-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', ...paths(EXTERNAL_SPECS), ...(engine === 'mysql' ? paths(ONE_ENGINE_SPECS) : [])],
  globals: { E2E_ENGINE: engine },
  globalSetup: '<rootDir>/test/support/global-setup.js',
});

export default {
  // A global option (ignored inside projects): e2e specs start processes and databases.
  testTimeout: 60_000,
  // Both cores of a two-core machine (Jest's default leaves one idle): an e2e spec spends much of
  // its time waiting on a process it started (the service, the command line, a broker).
  maxWorkers: Math.max(2, availableParallelism() - 1),
  projects: [
    { ...base, displayName: 'unit', rootDir: '.', roots: ['<rootDir>/src'], testMatch: ['**/*.spec.ts'] },
    e2e('sqlite'),
    ...(process.env.TEST_DATABASE_URL ? [e2e('mysql')] : []),
  ],
};
