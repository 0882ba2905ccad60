// node scripts/check-test-output.mjs <log>: fails (exit 1, naming each line) when the output of a
// green `npm test` holds a warning nobody meant: a Nest logger WARN line, an npm warning, a Node
// process warning, a console.warn, a pino line at level warn; or a test or suite that was skipped or
// left as a todo (Jest's summary "Tests: … 2 skipped, 1 todo, …", node:test's "ℹ skipped 1"), so that
// nothing passes by not running. A test that checks a warning captures
// it with a logger of its own instead of printing it. .ci/run runs `npm test` through `tee` into a
// log and then this script; see docs/development.md ("No warnings in a green run").
import { readFileSync } from 'node:fs';

/** What a warning line looks like, once colours are taken off. */
const WARNING = [
  /\bWARN\b/, // Nest's ConsoleLogger: "[Nest] 123  - <date>     WARN [Context] …"
  /^npm warn/i,
  /\(node:\d+\) (?:\[[A-Z0-9_]+\] )?\w*Warning\b/, // process warnings: "(node:123) [DEP0040] DeprecationWarning: …"
  /^\s*console\.warn\b/, // Jest's header above a console.warn
  /"level":40\b/, // pino JSON at level warn
];

/** A summary line that counts tests or suites that did not run: Jest's and node:test's. */
const NOT_RUN = [/^(?:Tests|Test Suites):.*\b[1-9]\d* (?:skipped|todo)\b/, /^ℹ (?:skipped|todo) [1-9]\d*$/];

/**
 * Warnings a green run prints on purpose, each with why. Keep it short: a line here is a
 * warning nobody reads any more.
 */
const ALLOWED = [];

const file = process.argv[2];
if (!file) {
  console.error('usage: node scripts/check-test-output.mjs <log of npm test>');
  process.exit(2);
}
// eslint-disable-next-line no-control-regex
const plain = (line) => line.replace(/\u001b\[[0-9;]*m/g, '');
const lines = readFileSync(file, 'utf8').split('\n').map(plain);
const where = (line, index) => `${file}:${index + 1}: ${line.trim().slice(0, 300)}`;
const found = lines.flatMap((line, index) =>
  WARNING.some((pattern) => pattern.test(line)) && !ALLOWED.some((pattern) => pattern.test(line)) ? [where(line, index)] : [],
);
const notRun = lines.flatMap((line, index) => (NOT_RUN.some((pattern) => pattern.test(line.trim())) ? [where(line, index)] : []));
if (found.length > 0) {
  console.error(
    `${found.length} warning line(s) in the test output that no test captures and the allow-list of scripts/check-test-output.mjs does not name:\n${found.join('\n')}`,
  );
}
if (notRun.length > 0) {
  console.error(`skipped or todo tests in the test output (every test must run; remove or fix them):\n${notRun.join('\n')}`);
}
if (found.length > 0 || notRun.length > 0) process.exit(1);
console.log(`test output: no warning lines (${lines.length} lines read)`);
