// node scripts/check-links.mjs [file.md …]: every relative link of the project's Markdown
// resolves: the file exists, and a `#fragment` names a heading of that file (GitHub's heading
// slugs) or an explicit anchor. Links with a scheme (https:, mailto:) are not fetched. Prints one
// line per broken link and exits 1 if there is any. Pointers in prose to a README section by name
// ("the README's "Memory sizing"", "README section X") must name a heading the README has. Without arguments: README.md, docs/*.md and
// the other READMEs of the repository. `src/docs.spec.ts` runs it in `npm test`.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';

const ROOT = resolve(new URL('..', import.meta.url).pathname);
const markdown = new MarkdownIt({ html: true });

/** The default set: README.md, docs/*.md, clients/typescript/README.md, assets/README.md. */
export function projectMarkdown() {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(ROOT, 'docs', f));
  return [join(ROOT, 'README.md'), ...docs, join(ROOT, 'clients/typescript/README.md'), join(ROOT, 'assets/README.md')].filter((f) => existsSync(f));
}

/** The anchors a Markdown file offers: its headings' slugs, as GitHub makes them, and `<a id>`/`name`. */
function anchorsOf(file) {
  const slugger = new GithubSlugger();
  const anchors = new Set();
  const tokens = markdown.parse(readFileSync(file, 'utf8'), {});
  tokens.forEach((token, i) => {
    if (token.type === 'heading_open') {
      const text = tokens[i + 1].children.map((c) => (c.type === 'code_inline' || c.type === 'text' ? c.content : '')).join('');
      anchors.add(slugger.slug(text));
    }
    for (const match of (token.content ?? '').matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
  });
  return anchors;
}

/** Every link target of a file: inline links, images and reference definitions. */
function linksOf(file) {
  const links = [];
  const walk = (tokens) => {
    for (const token of tokens) {
      if (token.type === 'link_open' || token.type === 'image')
        links.push({ href: token.attrGet(token.type === 'image' ? 'src' : 'href'), line: token.map?.[0] });
      if (token.children) walk(token.children);
    }
  };
  const tokens = markdown.parse(readFileSync(file, 'utf8'), {});
  // Inline tokens carry no line of their own: give each link its block's line.
  for (const block of tokens) {
    const before = links.length;
    walk(block.children ?? []);
    for (let i = before; i < links.length; i++) links[i].line = (block.map?.[0] ?? 0) + 1;
  }
  return links;
}

/** A heading's text as a reader quotes it: inline code without its backticks, spaces collapsed, any case. */
const normalized = (text) => text.replace(/`/g, '').replace(/\s+/g, ' ').trim().toLowerCase();

/** The headings of a Markdown file, normalized. */
function headingsOf(file) {
  const tokens = markdown.parse(readFileSync(file, 'utf8'), {});
  return new Set(tokens.flatMap((token, i) => (token.type === 'heading_open' ? [normalized(tokens[i + 1].content)] : [])));
}

/**
 * Pointers in prose to a section of the README by name, which no link check sees: `the README's
 * "Memory sizing"`, `the README's Memory sizing section`, `the README's [Performance](…) section`,
 * `README section "Quick start"`. Each named heading must exist in README.md, and a linked name
 * must link into README.md (a section that moved to docs/ is named there, not as the README's).
 */
export function staleReadmePointers(files = projectMarkdown()) {
  const readme = join(ROOT, 'README.md');
  const headings = headingsOf(readme);
  const patterns = [
    /\bREADME(?:\.md)?['’]s\s+\[([^\]]+)\]\(([^)]*)\)/g,
    /\bREADME(?:\.md)?['’]s\s+["“]([^"”]+)["”]/g,
    /\bREADME(?:\.md)?['’]s\s+([A-Z][\w`' -]*?)\s+section\b/g,
    /\bREADME(?:\.md)?\s+section\s+["“]([^"”]+)["”]/g,
    /\bREADME(?:\.md)?\s+section\s+\[([^\]]+)\]\(([^)]*)\)/g,
  ];
  const found = [];
  for (const file of files) {
    // Fenced code is not prose: blanked, keeping its lines so that line numbers stay right.
    const text = readFileSync(file, 'utf8').replace(/^```[^\n]*\n[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, ' '));
    const seen = new Set();
    const stale = [];
    for (const pattern of patterns) {
      for (const match of text.matchAll(pattern)) {
        if (seen.has(match.index)) continue;
        seen.add(match.index);
        const [, name, target] = match;
        const where = `${relative(ROOT, file)}:${text.slice(0, match.index).split('\n').length}`;
        const quoted = match[0].replace(/\s+/g, ' ');
        if (!headings.has(normalized(name))) stale.push({ at: match.index, line: `${where}: "${quoted}": README.md has no heading "${normalized(name)}"` });
        else if (target !== undefined && resolve(dirname(file), decodeURIComponent(target.split('#')[0] || relative(dirname(file), file))) !== readme) {
          stale.push({ at: match.index, line: `${where}: "${quoted}": named as the README's but links to ${target}` });
        }
      }
    }
    found.push(...stale.sort((a, b) => a.at - b.at).map((s) => s.line));
  }
  return found;
}

export function brokenLinks(files = projectMarkdown()) {
  const anchorCache = new Map();
  const anchors = (file) => {
    if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(file));
    return anchorCache.get(file);
  };
  const broken = [];
  for (const file of files) {
    for (const { href, line } of linksOf(file)) {
      if (!href || /^[a-z][a-z0-9+.-]*:/i.test(href)) continue;
      const [path, fragment] = href.split('#');
      const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      const where = `${relative(ROOT, file)}:${line}`;
      if (!existsSync(target)) {
        broken.push(`${where}: ${href}: no such file`);
        continue;
      }
      if (fragment === undefined || fragment === '') continue;
      if (statSync(target).isDirectory() || !target.endsWith('.md')) {
        // Line anchors into code (#L10) are GitHub's own; anything else on a non-Markdown target is unknown.
        if (!/^L\d+(-L\d+)?$/.test(fragment)) broken.push(`${where}: ${href}: a fragment on a file that is not Markdown`);
        continue;
      }
      if (!anchors(target).has(decodeURIComponent(fragment))) broken.push(`${where}: ${href}: no heading "#${fragment}" in ${relative(ROOT, target)}`);
    }
  }
  return broken;
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const files = process.argv.slice(2).map((f) => resolve(f));
  const broken = [...brokenLinks(files.length > 0 ? files : undefined), ...staleReadmePointers(files.length > 0 ? files : undefined)];
  for (const line of broken) console.error(line);
  if (broken.length > 0) process.exit(1);
  console.error(`links: all resolve (${(files.length > 0 ? files : projectMarkdown()).length} files)`);
}
