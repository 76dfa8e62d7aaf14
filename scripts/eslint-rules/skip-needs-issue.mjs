// ESLint rule: a skipped mocha test (describe.skip, it.skip, context.skip, specify.skip, xit and
// friends, this.skip()) must say which issue it waits for, in a comment on its line or the line
// above ("issue 12", "#12" or an .../issues/12 link), so no test is skipped and forgotten.
const SUITES = new Set(['describe', 'context', 'it', 'specify']);
const X_ALIASES = new Set(['xdescribe', 'xcontext', 'xit', 'xspecify']);
const ISSUE = /\bissues?\s*#?\d+|#\d+|\/issues\/\d+/i;

function isSkip(callee) {
  if (callee.type === 'Identifier') return X_ALIASES.has(callee.name);
  if (callee.type !== 'MemberExpression' || callee.computed || callee.property.name !== 'skip') return false;
  return (
    callee.object.type === 'ThisExpression' ||
    (callee.object.type === 'Identifier' && SUITES.has(callee.object.name))
  );
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'Require an issue reference on every skipped test' },
    schema: [],
    messages: {
      missing:
        'A skipped test needs the issue it waits for in a comment on this line or the line above (e.g. "// until issue 12: ...").',
    },
  },
  create(context) {
    const source = context.sourceCode;
    return {
      CallExpression(node) {
        if (!isSkip(node.callee)) return;
        const line = node.loc.start.line;
        const referenced = source
          .getAllComments()
          .some((c) => c.loc.end.line >= line - 1 && c.loc.start.line <= line && ISSUE.test(c.value));
        if (!referenced) context.report({ node: node.callee, messageId: 'missing' });
      },
    };
  },
};
