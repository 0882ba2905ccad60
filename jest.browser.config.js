// npm run test:browser: Swagger UI driven in a real browser (playwright-core and Debian's
// Chromium, apt-get install chromium; .ci/run installs it). Kept out of `npm test` so that the
// quick start needs no browser. Starts the built service on the embedded SQLite database.
import config from './jest.config.js';

const e2e = config.projects.find((p) => p.displayName === 'e2e-sqlite');

export default {
  testTimeout: 120_000,
  projects: [{ ...e2e, displayName: 'browser', testMatch: ['<rootDir>/test/browser/**/*.browser-spec.ts'] }],
};
