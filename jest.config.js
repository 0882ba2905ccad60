// Jest runs in native ESM mode (node --experimental-vm-modules): NestJS 12 packages are
// ESM-only and Node 20 cannot require() them from Jest's CommonJS runtime.
const base = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  testEnvironment: 'node',
};

// The e2e suite runs against the embedded SQLite default always, and against MySQL or
// MariaDB too when TEST_DATABASE_URL points at a server (each test file gets a fresh
// database there). The CLI tests run the built command line, hence the build first.
// Medium specs (test/medium/*.medium-spec.ts) call one service, built from its real module,
// on the same fresh databases: they run in both projects too.
const e2e = (engine) => ({
  ...base,
  displayName: `e2e-${engine}`,
  rootDir: '.',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.e2e-spec.ts', '**/*.medium-spec.ts'],
  // Specs that start a MariaDB of their own, or that use no database (the build), test the same
  // thing under either engine: run them once.
  testPathIgnorePatterns: engine === 'mysql' ? ['/node_modules/', '/test/database-tls\\.e2e-spec\\.ts$', '/test/build\\.e2e-spec\\.ts$'] : ['/node_modules/'],
  globals: { E2E_ENGINE: engine },
  globalSetup: '<rootDir>/test/support/global-setup.js',
});

export default {
  // A global option (ignored inside projects): e2e specs start processes and databases.
  testTimeout: 60_000,
  projects: [
    { ...base, displayName: 'unit', rootDir: 'src', testMatch: ['**/*.spec.ts'] },
    e2e('sqlite'),
    ...(process.env.TEST_DATABASE_URL ? [e2e('mysql')] : []),
  ],
};
