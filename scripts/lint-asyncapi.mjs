// npm run docs:lint:events: validates assets/asyncapi.yaml (served at /docs/events.yaml) (the change events) with the
// AsyncAPI initiative's own parser (@asyncapi/parser: the AsyncAPI 3 schema and its Spectral
// rules), offline. Every diagnostic of severity error or warning fails the run.
import { readFileSync } from 'node:fs';
import { Parser } from '@asyncapi/parser';

const FILE = new URL('../assets/asyncapi.yaml', import.meta.url);
const SEVERITY = ['error', 'warning', 'info', 'hint'];
const { document, diagnostics } = await new Parser().parse(readFileSync(FILE, 'utf8'), { source: FILE.pathname });
const serious = diagnostics.filter((d) => d.severity <= 1);
for (const d of diagnostics) console.error(`${SEVERITY[d.severity]} ${d.code} at ${d.path.join('.') || '/'}: ${d.message}`);
if (!document || serious.length > 0) {
  console.error(`assets/asyncapi.yaml: ${serious.length} errors or warnings`);
  process.exit(1);
}
console.error(`assets/asyncapi.yaml: valid AsyncAPI ${document.version()}, ${document.channels().length} channels, ${document.operations().length} operations`);
