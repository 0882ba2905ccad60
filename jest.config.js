// Jest runs in native ESM mode (node --experimental-vm-modules): NestJS 12 packages
// are ESM-only and Node 20 cannot require() them from Jest's CommonJS runtime.
const tsJest = ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }];
const base = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': tsJest },
  testEnvironment: 'node',
};

export default {
  projects: [
    { ...base, displayName: 'unit', rootDir: 'src', testMatch: ['**/*.spec.ts'] },
  ],
};
