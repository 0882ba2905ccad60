// npm run docs:lint: lints the document the service publishes (built from dist/ as /docs-json
// serves it) with Redocly CLI and the rules of redocly.yaml. The document is kept in
// artifacts/openapi.json so that the line numbers of a finding can be looked up.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from './openapi-document.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const file = fileURLToPath(new URL('../artifacts/openapi.json', import.meta.url));
mkdirSync(new URL('../artifacts/', import.meta.url), { recursive: true });
writeFileSync(file, JSON.stringify(await openApiDocument(), null, 2) + '\n');

const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
const { status } = spawnSync(process.execPath, [cli, 'lint', file, '--config', 'redocly.yaml', '--format', 'stylish'], {
  cwd: root,
  stdio: 'inherit',
  // Redocly's notices about newer releases and Node versions are not findings.
  env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' },
});
process.exit(status ?? 1);
