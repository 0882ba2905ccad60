import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * A reader of this repository has no issue tracker: the word issue (or pull request) followed by
 * a number, or a number after a hash, in a comment, a test title or a document leads nowhere. Every text file says in words which
 * change or feature it means. The patterns are built from pieces, so that this file does not
 * match them itself.
 */
const ISSUE = 'issue';
const REFERENCE = [
  // the word and a number: with a hash, a colon, a dash, "no." or "number" between, singular or plural
  new RegExp(`\\b(?:${ISSUE}s?|pull requests?)[\\s#:-]*(?:no\\.?\\s*|number\\s*)?#?\\d+`, 'i'),
  // a hash and a number after a space, a bracket or the start of a line (not a colour in quotes)
  new RegExp('(?:^|[\\s(\\[,;])#\\d+\\b'),
];

/** Never text of the project's own, or generated, or too large to be written by hand. */
const SKIPPED = /^(?:node_modules|dist|data|artifacts|coverage|bench\/results)\/|(?:^|\/)package-lock\.json$|\.(?:png|jpe?g|gif|ico|woff2?|gz|zip|sqlite)$/;

const root = new URL('..', import.meta.url).pathname;

/** The files git tracks or would add (new, not ignored); without git, a walk of the tree. */
function projectFiles(): string[] {
  try {
    const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return listed.split('\0').filter((file) => file && existsSync(join(root, file)));
  } catch {
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const path = join(dir, entry.name);
        if (entry.name === '.git') return [];
        return entry.isDirectory() ? walk(path) : [relative(root, path)];
      });
    return walk(root);
  }
}

/** `file:line: text` for every line that names an issue by its number. */
function issueReferences(files: string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    if (SKIPPED.test(file) || !statSync(join(root, file)).isFile()) continue;
    const bytes = readFileSync(join(root, file));
    if (bytes.subarray(0, 8000).includes(0)) continue; // binary
    bytes
      .toString('utf8')
      .split('\n')
      .forEach((line, index) => {
        if (REFERENCE.some((pattern) => pattern.test(line))) found.push(`${file}:${index + 1}: ${line.trim().slice(0, 160)}`);
      });
  }
  return found;
}

describe('the text of the tree', () => {
  it('recognises a reference to an issue by number, and leaves other numbers alone', () => {
    const refers = (text: string) => REFERENCE.some((pattern) => pattern.test(text));
    for (const text of [
      `(${ISSUE} 22)`,
      `${ISSUE[0].toUpperCase()}${ISSUE.slice(1)} 26: the console`,
      `${ISSUE}s 20 and 25`,
      `${ISSUE} #` + '7',
      `${ISSUE}-13`,
      'fixed in #' + '25',
      '(#' + '25)',
    ]) {
      expect([text, refers(text)]).toEqual([text, true]);
    }
    for (const text of [
      "strokeStyle = '#111'",
      '## Heading',
      'token issue and last-use update',
      `${ISSUE}s a token for 30 days`,
      'the README#quick-start',
      'HTTP 404',
    ]) {
      expect([text, refers(text)]).toEqual([text, false]);
    }
  });

  it('names no issue by its number in any file (a reader has no tracker: say what is meant)', () => {
    const files = projectFiles();
    expect(files.length).toBeGreaterThan(100);
    expect(issueReferences(files)).toEqual([]);
  });
});
