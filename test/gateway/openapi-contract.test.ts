import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import { routeErrorCodes } from '../../apps/gateway/http/route-table';
import { ERROR_STATUS } from '../../core/errors/app-error';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { createTestUser, type TestUser } from '../../testkit/users';

type Json = Record<string, unknown>;
interface MediaType {
  schema?: Json;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
interface Link {
  operationId: string;
  parameters?: Record<string, string>;
  requestBody?: Record<string, unknown>;
}
interface Response {
  description: string;
  headers?: Record<string, { required?: boolean }>;
  content?: Record<string, MediaType>;
  links?: Record<string, Link>;
}
interface Operation {
  operationId: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, Response>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json> };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The document's schemas under JSON Schema 2020-12 (OpenAPI 3.1's dialect), its formats checked. */
function validatorOf(doc: Document) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addKeyword('example');
  ajv.addFormat('uuid', UUID);
  ajv.addFormat('date-time', (v: string) => !Number.isNaN(Date.parse(v)) && /T/.test(v));
  ajv.addFormat('uri', (v: string) => URL.canParse(v));
  ajv.addFormat('email', /^[^@\s]+@[^@\s]+$/);
  ajv.addFormat('binary', () => true);
  ajv.addSchema({ $id: 'doc', components: doc.components });
  return (schema: Json, value: unknown): string[] => {
    const validate = ajv.compile(
      JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')) as Json,
    );
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  };
}

const resolve = (doc: Document, schema: Json | undefined): Json | undefined => {
  const ref = schema?.$ref;
  return typeof ref === 'string' ? doc.components.schemas[ref.split('/').at(-1) ?? ''] : schema;
};

/** The examples a media type gives: its own, or its schema's (a component's). */
function examplesOf(doc: Document, media: MediaType): unknown[] {
  if (media.examples) return Object.values(media.examples).map((e) => e.value);
  if ('example' in media) return [media.example];
  const schema = resolve(doc, media.schema);
  return schema && 'example' in schema ? [schema.example] : [];
}

function operations(doc: Document) {
  return [...Object.entries(doc.paths), ...Object.entries(doc.webhooks)].flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ key: `${method} ${path}`, method, path, op })),
  );
}

/** The top-level properties a request body may carry, across every media type and union branch. */
function bodyProperties(doc: Document, op: Operation): Set<string> {
  const names = new Set<string>();
  const visit = (schema: Json | undefined): void => {
    const resolved = resolve(doc, schema);
    if (!resolved) return;
    for (const name of Object.keys((resolved.properties as Json | undefined) ?? {})) names.add(name);
    for (const union of ['anyOf', 'oneOf', 'allOf'])
      for (const branch of (resolved[union] as Json[] | undefined) ?? []) visit(branch);
  };
  for (const media of Object.values(op.requestBody?.content ?? {})) visit(media.schema);
  return names;
}

/** What `$response.body#/a/0/b` reads from an answer; undefined when the pointer leads nowhere. */
function readPointer(body: unknown, expression: string): unknown {
  const pointer = /^\$response\.body#(\/.*)$/.exec(expression)?.[1];
  if (pointer === undefined) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .reduce<unknown>(
      (at, segment) => (at === null || typeof at !== 'object' ? undefined : (at as Json)[segment]),
      body,
    );
}

/** The codes an error answer documents: the names of its examples. */
const documentedCodes = (response: Response | undefined) =>
  Object.keys(response?.content?.['application/json']?.examples ?? {});

describe('OpenAPI document: examples and error codes', function () {
  this.timeout(60_000);
  let gateway: TestGateway;
  let user: TestUser;
  let doc: Document;
  let validate: ReturnType<typeof validatorOf>;

  before(async () => {
    gateway = await startGateway();
    user = await createTestUser();
    doc = (await (await fetch(`${gateway.url}/api/v1/openapi.json`)).json()) as Document;
    validate = validatorOf(doc);
  });
  after(() => gateway.close());

  it('gives every request body and every answer with a body an example', () => {
    const missing: string[] = [];
    for (const { key, op } of operations(doc)) {
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {}))
        if (examplesOf(doc, media).length === 0) missing.push(`${key} request ${type}`);
      for (const [status, response] of Object.entries(op.responses))
        for (const [type, media] of Object.entries(response.content ?? {}))
          if (examplesOf(doc, media).length === 0) missing.push(`${key} ${status} ${type}`);
    }
    assert.deepEqual(missing, []);
  });

  it('links only to real operations, with their own parameters and body fields, read from where the answer has them', () => {
    const byId = new Map(operations(doc).map(({ op }) => [op.operationId, op]));
    const problems: string[] = [];
    for (const { key, op } of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        const example = examplesOf(doc, response.content?.['application/json'] ?? {})[0];
        for (const [name, link] of Object.entries(response.links ?? {})) {
          const where = `${key} ${status} → ${name}`;
          const target = byId.get(link.operationId);
          if (!target) {
            problems.push(`${where}: no operation ${link.operationId}`);
            continue;
          }
          const expressions = [
            ...Object.entries(link.parameters ?? {}).map(([param, expression]) => {
              if (!target.parameters?.some((p) => p.name === param))
                problems.push(`${where}: no parameter ${param}`);
              return expression;
            }),
            ...Object.entries(link.requestBody ?? {}).flatMap(([field, value]) => {
              if (!bodyProperties(doc, target).has(field)) problems.push(`${where}: no body field ${field}`);
              return [value].flat() as string[];
            }),
          ];
          for (const expression of expressions)
            if (typeof readPointer(example, expression) !== 'string')
              problems.push(`${where}: ${expression} reads no id from the answer's example`);
        }
      }
    }
    assert.deepEqual(problems, []);
    // Schemathesis's stateful phase walks these: create a chat, send to it, poll, decide.
    const linksOf = (operationId: string, status: string) =>
      Object.values(byId.get(operationId)?.responses[status]?.links ?? {}).map((l) => l.operationId);
    assert.ok(linksOf('createChat', '201').includes('sendTurn'));
    assert.ok(linksOf('sendTurn', '202').includes('getRun'));
    assert.ok(linksOf('getRun', '200').includes('completeWaitpoint'));
    assert.ok(linksOf('uploadFiles', '201').includes('tool_crop_image'));
    // And a wrong pointer is caught.
    assert.equal(readPointer({ data: [{ id: 'x' }] }, '$response.body#/data/0/id'), 'x');
    assert.equal(readPointer({ data: [] }, '$response.body#/data/0/id'), undefined);
  });

  it('has every example valid against its own schema', () => {
    const invalid: string[] = [];
    let checked = 0;
    for (const { key, op } of operations(doc)) {
      const media = [
        ...Object.entries(op.requestBody?.content ?? {}).map(([t, m]) => [`request ${t}`, m] as const),
        ...Object.entries(op.responses).flatMap(([status, r]) =>
          Object.entries(r.content ?? {}).map(([t, m]) => [`${status} ${t}`, m] as const),
        ),
      ];
      for (const [where, m] of media) {
        if (!m.schema) continue;
        for (const example of examplesOf(doc, m)) {
          checked++;
          for (const problem of validate(m.schema, example)) invalid.push(`${key} ${where}: ${problem}`);
        }
      }
    }
    assert.deepEqual(invalid, []);
    assert.ok(checked > 100, `only ${checked} examples checked`);
    // The validator does refuse: a send without text, an id that is no uuid, an unknown member.
    const send = { $ref: '#/components/schemas/CompletionRequest' };
    assert.ok(validate(send, { planMode: true }).length > 0);
    assert.ok(validate(send, { text: 'hi', chatId: 'not-a-uuid' }).length > 0);
    assert.ok(validate(send, { text: 'hi', planmode: true }).length > 0);
    assert.ok(validate({ $ref: '#/components/schemas/Chat' }, { id: 'x' }).length > 0);
  });

  it('refuses in the document the blank names the routes refuse, so a client generating from it is not refused', () => {
    // Names are trimmed before they are stored: a name of white space alone is refused, and the
    // document must say so too, not only minLength (a fuzzer's "\v" was valid to it, refused by us).
    for (const [schema, field] of [
      ['NewApiKey', 'name'],
      ['NewChat', 'title'],
    ] as const) {
      const ref = { $ref: `#/components/schemas/${schema}` };
      for (const blank of ['', '\u000b', ' \r\n\t'])
        assert.ok(
          validate(ref, { [field]: blank }).length > 0,
          `${schema}.${field} ${JSON.stringify(blank)}`,
        );
      assert.deepEqual(validate(ref, { [field]: ' \tlaptop' }), [], `${schema}.${field}`);
    }
  });

  it('has every error example carry the code it is named after, at that code’s status', () => {
    for (const { key, op } of operations(doc))
      for (const [status, response] of Object.entries(op.responses)) {
        if (!response.description.startsWith('Error:')) continue;
        for (const [code, example] of Object.entries(
          response.content?.['application/json']?.examples ?? {},
        )) {
          assert.equal((example.value as { code: string }).code, code, key);
          assert.equal(String(ERROR_STATUS[code as keyof typeof ERROR_STATUS]), status, `${key} ${code}`);
        }
      }
  });

  it('documents, per operation, every code routeErrorCodes gives its route, and no other', () => {
    for (const spec of gateway.routes.specs) {
      const path = spec.path.replace(/[:*](\w+)/g, '{$1}');
      const op = doc.paths[path]?.[spec.method];
      assert.ok(op, `${spec.method} ${path}`);
      const inDoc = Object.entries(op.responses)
        .filter(([, r]) => r.description.startsWith('Error:'))
        .flatMap(([, r]) => documentedCodes(r))
        .sort();
      assert.deepEqual(inDoc, [...routeErrorCodes(spec)].sort(), op.operationId);
    }
  });

  it('documents the codes of the guards, the body, the chat and Idempotency-Key where they apply', () => {
    for (const { key, op } of operations(doc).filter(
      (o) => !o.key.includes(' agent.') && !o.key.includes(' tool.'),
    )) {
      const codes = (status: number) => documentedCodes(op.responses[String(status)]);
      const security = (op.security ?? []).flatMap((s) => Object.keys(s));
      if (security.length > 0) assert.ok(codes(401).includes('UNAUTHORIZED'), key);
      if (security.includes('apiKey')) {
        assert.ok(codes(429).includes('RATE_LIMITED'), key);
        const headers = op.responses['429']?.headers ?? {};
        assert.deepEqual(
          Object.keys(headers),
          ['retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'],
          key,
        );
        assert.equal(headers['retry-after']?.required, true, key);
      }
      if (security.includes('session') && op.operationId !== undefined)
        assert.equal(codes(403).includes('FORBIDDEN'), key.split(' ')[0] !== 'get', key);
      if (op.parameters?.some((p) => p.in === 'path' && p.name === 'chatId'))
        assert.ok(codes(404).includes('CHAT_NOT_FOUND'), key);
      const idempotent = op.parameters?.some((p) => p.in === 'header' && p.name === 'idempotency-key');
      assert.equal(codes(409).includes('IDEMPOTENCY_IN_PROGRESS'), idempotent === true, key);
      assert.equal(codes(422).includes('IDEMPOTENCY_KEY_REUSED'), idempotent === true, key);
      if (op.requestBody?.content['application/json'])
        for (const code of ['INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'])
          assert.ok([...codes(400), ...codes(413), ...codes(415)].includes(code), `${key} ${code}`);
    }
    const send = doc.paths['/api/v1/completions']?.post;
    assert.ok(documentedCodes(send?.responses['409']).includes('RUN_ACTIVE'));
    // With ACTIVE_LIMIT beside it, a 429 may come without the RateLimit headers.
    assert.equal(send?.responses['429']?.headers?.['ratelimit-limit']?.required, false);
  });

  /** Each operation's path with its parameters filled: ids that name nothing of the caller's. */
  const concrete = (path: string) =>
    path.replace(/\{(\w+)\}/g, (_m, name: string) => (name === 'key' ? 'no/such/file' : randomUUID()));
  const apiOperations = () =>
    operations(doc).filter((o) => o.path.startsWith('/api/') && !o.path.endsWith('openapi.json'));

  it('answers each operation, on the wire, only with codes it documents', async () => {
    const seen: string[] = [];
    const check = async (key: string, op: Operation, res: globalThis.Response) => {
      if (res.status < 400) return;
      const body = (await res.json()) as { code: string };
      assert.ok(
        documentedCodes(op.responses[String(res.status)]).includes(body.code),
        `${key} answered ${res.status} ${body.code}, undocumented`,
      );
      assert.deepEqual(validate({ $ref: '#/components/schemas/Error' }, body), [], key);
      seen.push(`${res.status} ${body.code}`);
    };
    for (const { key, method, path, op } of apiOperations()) {
      const url = `${gateway.url}${concrete(path)}`;
      const onSession = (op.security ?? []).some((s) => 'session' in s);
      const authed = (op.security ?? []).length > 0;
      const credentials: Record<string, string> = onSession
        ? { cookie: user.cookie }
        : authed
          ? user.bearer
          : {};
      const call = async (headers: Record<string, string>, body?: string) =>
        check(key, op, await fetch(url, { method: method.toUpperCase(), headers, body }));
      // No credentials.
      if (authed) await call({});
      // Ids that are not the caller's.
      await call(credentials);
      // A cross-site request on the session: refused on writes only.
      if (onSession) await call({ ...credentials, 'sec-fetch-site': 'cross-site' });
      // A body that is not JSON, whether or not the route takes one.
      if (method !== 'get')
        await call({ ...credentials, 'content-type': 'application/json' }, '{"unterminated');
    }
    for (const expected of [
      '401 UNAUTHORIZED',
      '404 CHAT_NOT_FOUND',
      '400 INVALID_JSON',
      '400 INVALID_REQUEST',
    ])
      assert.ok(seen.includes(expected), `${expected} was provoked`);
  });

  it('reads a JSON body only on a route that takes one', async () => {
    const chat = (await (
      await fetch(`${gateway.url}/api/v1/chats`, {
        method: 'POST',
        headers: { ...user.bearer, 'content-type': 'application/json' },
        body: '{}',
      })
    ).json()) as { id: string };
    const res = await fetch(`${gateway.url}/api/v1/chats/${chat.id}`, {
      method: 'DELETE',
      headers: { ...user.bearer, 'content-type': 'application/json' },
      body: '{"unterminated',
    });
    assert.equal(res.status, 204);
  });

  it('answers a reused Idempotency-Key with the code the document names', async () => {
    const key = randomUUID();
    const chatId = randomUUID();
    const send = (text: string) =>
      fetch(`${gateway.url}/api/v1/completions`, {
        method: 'POST',
        headers: { ...user.bearer, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ text, chatId }),
      });
    // A refusal is kept for the key like any other answer that did something definite.
    assert.equal((await send('first')).status, 404);
    const reused = await send('second');
    const body = (await reused.json()) as { code: string };
    assert.deepEqual([reused.status, body.code], [422, 'IDEMPOTENCY_KEY_REUSED']);
    const op = doc.paths['/api/v1/completions']?.post as Operation;
    assert.ok(documentedCodes(op.responses['422']).includes(body.code));
  });

  it('requires on a send only what a send needs: text', async () => {
    for (const name of ['CompletionRequest', 'CompletionForm'])
      assert.deepEqual(doc.components.schemas[name]?.required, ['text'], name);
    // And each optional member of every JSON request body may be left out, as the route takes it.
    for (const { key, op } of operations(doc)) {
      const media = op.requestBody?.content['application/json'];
      const schema = resolve(doc, media?.schema);
      // Where members depend on each other (crop_image's forms), requiredness is not per member.
      if (!media || !schema || schema.allOf || schema.oneOf || schema.anyOf) continue;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      for (const example of examplesOf(doc, media)) {
        if (typeof example !== 'object' || example === null) continue;
        for (const member of Object.keys(example)) {
          const without = { ...(example as Json) };
          delete without[member];
          const problems = validate(media.schema as Json, without);
          if (!required.has(member) && problems.some((p) => p.includes(`'${member}'`)))
            assert.fail(`${key}: ${member} is optional but required: ${problems.join('; ')}`);
        }
      }
    }
  });
});
