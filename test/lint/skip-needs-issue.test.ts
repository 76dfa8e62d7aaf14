import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint, Linter, type Rule } from 'eslint';

const ROOT = path.resolve(__dirname, '../..');
const RULE = pathToFileURL(path.join(ROOT, 'scripts/eslint-rules/skip-needs-issue.mjs')).href;

describe('lint: a skipped test names the issue it waits for', () => {
  let lint: (code: string) => number[];

  before(async () => {
    const { default: rule } = (await import(RULE)) as { default: Rule.RuleModule };
    const linter = new Linter({ configType: 'flat' });
    const config: Linter.Config[] = [
      {
        plugins: { project: { rules: { 'skip-needs-issue': rule } } },
        rules: { 'project/skip-needs-issue': 'error' },
      },
    ];
    // The lines reported, so each case shows which skip was refused.
    lint = (code) => linter.verify(code, config).map((m) => m.line);
  });

  it('refuses every form of skip without an issue reference', () => {
    const code = [
      "describe.skip('a', () => {});",
      "it.skip('b', () => {});",
      "context.skip('c', () => {});",
      "specify.skip('d', () => {});",
      "xit('e', () => {});",
      "xdescribe('f', () => {});",
      "it('g', function () { this.skip(); });",
      "// flaky, see the chat\nit.skip('h', () => {});",
    ].join('\n');
    assert.deepEqual(lint(code), [1, 2, 3, 4, 5, 6, 7, 9]);
  });

  it('accepts a skip with an issue reference on its line or the line above', () => {
    const code = [
      "// until issue 12: the provider's sandbox is down\nit.skip('a', () => {});",
      "describe.skip('b', () => {}); // #12",
      "/*\n * https://example.com/acme/svc/issues/34\n */\nxit('c', () => {});",
      "it('d', function () {\n  // Issue 7 decides what this returns\n  this.skip();\n});",
    ].join('\n');
    assert.deepEqual(lint(code), []);
  });

  it('refuses a reference further away than the line above', () => {
    assert.deepEqual(lint("// issue 12\n\nit.skip('a', () => {});"), [3]);
  });

  it('leaves other calls named skip alone', () => {
    assert.deepEqual(lint('rows.skip(3); stream.skip(); it("runs", () => {});'), []);
  });

  it('is on for every test file in the project configuration', async () => {
    const config = (await new ESLint({ cwd: ROOT }).calculateConfigForFile(
      path.join(ROOT, 'test/lint/any.test.ts'),
    )) as Linter.Config;
    assert.deepEqual(config.rules?.['project/skip-needs-issue'], [2]);
  });
});
