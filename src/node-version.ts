/**
 * The first import of every entry point (main.js, cli.js, migrate.js, instrumentation.js):
 * on a Node older than the one package.json's "engines" names, the process stops here with a line
 * that says which Node it needs and where to get it, before any other module of the app or of a
 * dependency runs (an ES module's imports are evaluated in order, so this one runs first). Without it
 * an old Node fails later and obscurely: better-sqlite3's build for Node-API 10 crashes Node 20 with
 * a segmentation fault. No imports of its own, so that nothing it loads can fail first.
 */
export const REQUIRED_NODE_MAJOR = 24;

/** The line to print when `version` (process.versions.node) is too old; undefined when it will do. */
export function unsupportedNode(version: string, execPath: string): string | undefined {
  const major = Number(version.split('.')[0]);
  if (major >= REQUIRED_NODE_MAJOR) return undefined;
  return (
    `plant-store-service needs Node.js ${REQUIRED_NODE_MAJOR} or later; this is Node.js v${version} (${execPath}). ` +
    `Install Node.js ${REQUIRED_NODE_MAJOR} LTS, or start it through npm (npm start, npm run start:prod), ` +
    `which runs the Node ${REQUIRED_NODE_MAJOR} that npm install puts in node_modules/.bin on a machine with an older Node.`
  );
}

const refusal = unsupportedNode(process.versions.node, process.execPath);
if (refusal) {
  process.stderr.write(`${refusal}\n`);
  process.exit(1);
}
