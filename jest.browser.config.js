// npm run test:browser: Swagger UI and the operator's console driven in a real browser
// (playwright-core and Debian's Chromium, apt-get install chromium; .ci/run installs it). Kept
// out of `npm test` so that the quick start needs no browser. Starts the built service on the
// embedded SQLite database, and on MySQL or MariaDB too when TEST_DATABASE_URL points at one
// (the console's spec runs on both; Swagger UI's needs the demo seed, which is SQLite-only).
import config from './jest.config.js';

const project = (engine) => {
  const e2e = config.projects.find((p) => p.displayName === `e2e-${engine}`);
  const specs = engine === 'sqlite' ? '**/*.browser-spec.ts' : 'console.browser-spec.ts';
  return { ...e2e, displayName: `browser-${engine}`, testMatch: [`<rootDir>/test/browser/${specs}`], testPathIgnorePatterns: ['/node_modules/'] };
};

export default {
  testTimeout: 120_000,
  // One browser at a time: two Chromiums and two services on two cores only slow each other down.
  maxWorkers: 1,
  projects: [project('sqlite'), ...(process.env.TEST_DATABASE_URL ? [project('mysql')] : [])],
};
