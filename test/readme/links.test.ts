import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** The project's own documentation: the README, docs/ and the bench's pages. */
function documents(): string[] {
  const inDir = (dir: string) =>
    readdirSync(path.join(ROOT, dir))
      .filter((f) => f.endsWith('.md'))
      .map((f) => path.join(dir, f));
  return ['README.md', ...inDir('docs'), ...inDir('bench')];
}

/** The text outside fenced code blocks, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/**
 * The anchors GitHub gives a document's headings: the heading's text as shown (code spans and
 * links by their text), lower-cased, without punctuation, spaces as hyphens; a repeated one gets
 * `-1`, `-2`, ….
 */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, text = ''] of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const shown = text.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const slug = shown
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count ? `${slug}-${count}` : slug);
  }
  return anchors;
}

/** Every inline link and image target of a document's prose, with its line. */
function linksOf(markdown: string): { target: string; line: number }[] {
  const text = prose(markdown);
  const out: { target: string; line: number }[] = [];
  for (const match of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const line = text.slice(0, match.index).split('\n').length;
    out.push({ target: match[1] ?? '', line });
  }
  return out;
}

describe('the documentation’s links', () => {
  it('finds GitHub’s anchors for headings', () => {
    const anchors = anchorsOf(
      '# A `npm start`: the stack\n## Where to add…\n## The worker’s settings\n## x\n## x\n',
    );
    assert.deepEqual(
      [...anchors],
      ['a-npm-start-the-stack', 'where-to-add', 'the-workers-settings', 'x', 'x-1'],
    );
  });

  it('leads to a file or folder of the repository, and to a heading of it', () => {
    const broken: string[] = [];
    for (const doc of documents()) {
      const markdown = readFileSync(path.join(ROOT, doc), 'utf8');
      for (const { target, line } of linksOf(markdown)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not ours to check
        const [file = '', anchor] = target.split('#');
        const resolved = file ? path.resolve(path.dirname(path.join(ROOT, doc)), file) : path.join(ROOT, doc);
        const where = `${doc}:${line} → ${target}`;
        if (!resolved.startsWith(ROOT + path.sep) && resolved !== ROOT) {
          broken.push(`${where}: outside the repository`);
          continue;
        }
        if (!existsSync(resolved)) {
          broken.push(`${where}: no such file`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!statSync(resolved).isFile() || !resolved.endsWith('.md')) {
          broken.push(`${where}: an anchor into something that is not a markdown file`);
          continue;
        }
        if (!anchorsOf(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor)))
          broken.push(`${where}: no such heading`);
      }
    }
    assert.deepEqual(broken, []);
  });
});
