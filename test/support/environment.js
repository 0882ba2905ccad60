import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestEnvironment } from 'jest-environment-node';

/**
 * Jest's node environment with a temporary directory of the spec file's own: TMPDIR points into
 * it while the file runs, for the service in the spec's process (os.tmpdir()) and every process
 * it starts, and it is removed afterwards. Spec files run side by side (one per worker) and beside
 * other checkouts' runs: a test that counts what is left in the temporary directory (the CSV
 * upload's spool files) sees only its own. Set before Jest's node environment copies
 * process.env for the spec. Open to every user, sticky, as /tmp is: the cluster and outage specs
 * run mariadbd as the mysql user in directories below it (mkdtemp makes it 0700, root's only).
 */
export default class SpecEnvironment extends TestEnvironment {
  constructor(config, context) {
    const outer = process.env.TMPDIR;
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-spec-'));
    chmodSync(dir, 0o1777);
    process.env.TMPDIR = dir;
    super(config, context);
    this.dir = dir;
    this.outer = outer;
  }

  async teardown() {
    await super.teardown();
    if (this.outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = this.outer;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
