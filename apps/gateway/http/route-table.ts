import { OpenAPIRegistry, OpenApiGeneratorV31, extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import type { Request, RequestHandler, Response, Router } from 'express';
import { z } from 'zod';
import { AppError, ERROR_STATUS, type ErrorCode } from '../../../core/errors/app-error';
import { weakEtag } from '../../../core/hashing/canonical';
import { jsonBody } from '../../../core/http/request';
import { addLogContext } from '../../../core/logging/context';
import { errorEnvelopeSchema } from '../../../core/schemas/errors';
import type { UserLimit } from '../../../operations/limits';
import { noneMatch } from './conditional';
import { errorExample } from './error-examples';
import { settleAuth } from './auth-context';
import { parse, type RequestSchema } from './parse';

extendZodWithOpenApi(z);

export type AuthKind = 'apiKey' | 'session' | 'none';

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type Input<S extends RequestSchema> = ReturnType<typeof parse<S>>;

/** An OpenAPI link; `parameters` and `requestBody` hold runtime expressions (`$response.body#/id`). */
export interface OpenApiLink {
  operationId: string;
  parameters?: Record<string, string>;
  requestBody?: Record<string, string | string[]>;
}

export interface RouteSpec<S extends RequestSchema> {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Express-style path: `/api/v1/chats/:chatId`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  auth: AuthKind;
  /** Ours, not the spec's: marked `x-extension: true` in the document. */
  extension?: boolean;
  request: S;
  /** The body's media type when it is not JSON; its schema documents the form fields. */
  bodyMediaType?: 'multipart/form-data';
  /** A route taking JSON and multipart alike: the form fields' schema, used for multipart requests. */
  multipartBody?: z.ZodType;
  /**
   * Per-user counters an apiKey route consumes besides the API-wide one (the send limit), whatever
   * the credential: its mirror for the console counts them too.
   */
  limits?: UserLimit[];
  /**
   * The handler only reads, and answers with its result (it writes nothing to the response
   * itself): its read may begin on a remembered API key while the key's check runs (apiKeyGuard).
   */
  readsOnly?: boolean;
  /** Runs after authentication and before validation (multer for uploads). */
  before?: RequestHandler[];
  /**
   * Runs before authentication and may answer on its own (a conditional poll the gateway knows to
   * be unchanged); calls next() otherwise. It must authenticate whatever it answers.
   */
  shortcut?: RequestHandler;
  responses: Record<
    number,
    {
      description: string;
      schema?: z.ZodType;
      headers?: z.ZodObject;
      mediaType?: 'text/event-stream';
      /** This answer's example, where the schema's own (a shared component's) does not fit it. */
      example?: unknown;
      /**
       * OpenAPI links: the operations this answer's ids lead to (a client generator's and
       * Schemathesis's stateful phase follow them: create a chat, send, poll, decide). An id that
       * goes in the next request's body is a `requestBody` of runtime expressions.
       */
      links?: Record<string, OpenApiLink>;
    }
  >;
  /**
   * Every error code the route's own work can answer; routeErrorCodes adds its guards', its body's
   * and validation's.
   */
  errors: ErrorCode[];
  handler: (input: Input<S>, req: Request, res: Response) => Promise<RouteResult>;
}

/** A path segment as the client meant it; as sent when it is not valid percent-encoding. */
function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * A body arrived but no parser took it (express.json only reads application/json, multer only
 * multipart): its media type is not one the route accepts.
 */
function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export interface Guards {
  apiKey: (limits: readonly UserLimit[], options?: { readsOnly?: boolean }) => RequestHandler[];
  session: RequestHandler[];
  /** The console's mirror of an apiKey route, counting the same per-user `limits`. */
  console: (limits: readonly UserLimit[]) => RequestHandler[];
  none: RequestHandler[];
}

/** Where the console reaches the public routes over the signed-in session (see mirrorForSession). */
export const CONSOLE_API_PREFIX = '/console/api/v1';
const PUBLIC_API_PREFIX = '/api/v1';

/** What a route's guards can answer (the key's or session's lookup reaches PostgreSQL). */
const COMMON_ERRORS: Record<AuthKind, ErrorCode[]> = {
  apiKey: ['UNAUTHORIZED', 'RATE_LIMITED', 'INTERNAL', 'SERVICE_UNAVAILABLE'],
  session: ['UNAUTHORIZED', 'INTERNAL', 'SERVICE_UNAVAILABLE'],
  none: ['INTERNAL'],
};
/** The session guard's cross-site check, on writes only (see sessionGuard). */
const SESSION_WRITE_ERRORS: ErrorCode[] = ['FORBIDDEN'];
/** What the JSON parser and the media-type check answer a route that takes a JSON body. */
const JSON_BODY_ERRORS: ErrorCode[] = ['INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];
/** What receiving files answers (core/uploads/receive). */
const MULTIPART_BODY_ERRORS: ErrorCode[] = ['TOO_MANY_FILES', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];

/** Every error code `spec` can answer: its own, its guards', its body's, and validation's. */
export function routeErrorCodes(spec: RouteSpec<RequestSchema>): ErrorCode[] {
  const takesJson = spec.request.body !== undefined && spec.bodyMediaType === undefined;
  const takesFiles = spec.bodyMediaType === 'multipart/form-data' || spec.multipartBody !== undefined;
  return [
    ...new Set([
      ...COMMON_ERRORS[spec.auth],
      ...(spec.auth === 'session' && spec.method !== 'get' ? SESSION_WRITE_ERRORS : []),
      ...(Object.values(spec.request).some(Boolean) ? (['INVALID_REQUEST'] as const) : []),
      ...(takesJson ? JSON_BODY_ERRORS : []),
      ...(takesFiles ? MULTIPART_BODY_ERRORS : []),
      ...spec.errors,
    ]),
  ];
}

export const errorSchema = errorEnvelopeSchema.openapi('Error');

const seconds = (description: string, example: string) =>
  z.string().regex(/^\d+$/).openapi({ description, example });
const RATE_LIMIT_HEADERS = {
  'ratelimit-limit': seconds('Requests allowed in the window of the counter that refused.', '60'),
  'ratelimit-remaining': seconds('Requests left in that window: 0.', '0'),
  'ratelimit-reset': seconds('Seconds until that window resets.', '42'),
};
/**
 * What a 429 carries: `Retry-After` always; the RateLimit headers with RATE_LIMITED only (see
 * operations/limits rateLimited and activeLimit).
 */
function tooManyRequestsHeaders(codes: readonly ErrorCode[]) {
  const onlyRateLimited = codes.every((code) => code === 'RATE_LIMITED');
  return z.object({
    'retry-after': seconds('Seconds until a request may succeed again.', '42'),
    ...Object.fromEntries(
      Object.entries(RATE_LIMIT_HEADERS).map(([name, schema]) => [
        name,
        onlyRateLimited ? schema : schema.optional().openapi({ description: 'With RATE_LIMITED.' }),
      ]),
    ),
  });
}

/**
 * One declaration per route feeds both Express and the OpenAPI document, so neither can hold a
 * route the other lacks; test/gateway/openapi.test.ts checks it from the outside as well.
 */
export class RouteTable {
  readonly registry = new OpenAPIRegistry();
  readonly routes: { method: string; path: string }[] = [];
  /** Every route added, in order. */
  readonly specs: RouteSpec<RequestSchema>[] = [];

  constructor(
    private readonly router: Router,
    private readonly guards: Guards,
  ) {
    this.registry.registerComponent('securitySchemes', 'apiKey', {
      type: 'http',
      scheme: 'bearer',
      description: 'An API key, `svck_live_…`, created with POST /api/keys.',
    });
    this.registry.registerComponent('securitySchemes', 'session', {
      type: 'apiKey',
      in: 'cookie',
      name: 'svc_session',
      description:
        'The product session cookie set by POST /api/auth/sign-in; named `__Host-svc_session` when served over https.',
    });
  }

  add<S extends RequestSchema>(spec: RouteSpec<S>): void {
    this.registerDocument(spec);
    const guards =
      spec.auth === 'apiKey'
        ? this.guards.apiKey(spec.limits ?? [], { readsOnly: spec.readsOnly ?? false })
        : this.guards[spec.auth];
    this.mount(spec, spec.path, guards);
    this.specs.push(spec as unknown as RouteSpec<RequestSchema>);
  }

  /**
   * The console is a browser app on the signed-in session, and session cookies are not accepted
   * on public routes: every public route is mounted again under CONSOLE_API_PREFIX behind the
   * console's guards (the session, with its cross-site check, counted against the same per-user
   * limits), with the same handler and so the same operation. Not in the OpenAPI document: the
   * console is not part of the public interface.
   */
  mirrorForSession(): void {
    for (const spec of this.specs.filter((s) => s.auth === 'apiKey' && s.path.startsWith(PUBLIC_API_PREFIX)))
      this.mount(
        spec,
        CONSOLE_API_PREFIX + spec.path.slice(PUBLIC_API_PREFIX.length),
        this.guards.console(spec.limits ?? []),
      );
  }

  private mount<S extends RequestSchema>(spec: RouteSpec<S>, path: string, guards: RequestHandler[]): void {
    this.routes.push({ method: spec.method, path });
    const handler: RequestHandler = async (req, res) => {
      let result: RouteResult;
      try {
        result = await this.run(spec, req, res);
      } catch (err) {
        // A refusal of the key comes first, whatever the route made of the request meanwhile.
        await settleAuth(req);
        throw err;
      }
      await settleAuth(req);
      for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
      if (res.headersSent) return;
      if (result.body === undefined) return void res.status(result.status).end();
      const json = JSON.stringify(result.body);
      if (req.method === 'GET' && result.status === 200) {
        // A poller that sends back the ETag of what it has is told, in a few bytes, that nothing
        // changed (see conditional.ts on why not Express's own check). An operation that names the
        // tag itself (it remembers it, see pollRun) computed it from these very bytes.
        const etag = result.headers?.etag ?? weakEtag(json);
        res.setHeader('etag', etag);
        const ifNoneMatch = req.get('if-none-match');
        if (ifNoneMatch !== undefined && noneMatch(ifNoneMatch, etag)) return void res.status(304).end();
      }
      res.status(result.status).type('application/json').send(json);
    };
    // Only a route that takes JSON reads a JSON body: any other ignores what it was sent.
    const json = spec.request.body && spec.bodyMediaType === undefined ? [jsonBody] : [];
    const shortcut = spec.shortcut ? [spec.shortcut] : [];
    this.router[spec.method](path, ...shortcut, ...guards, ...json, ...(spec.before ?? []), handler);
  }

  /** The request parsed and handed to the route's handler, whose result it answers. */
  private async run<S extends RequestSchema>(
    spec: RouteSpec<S>,
    req: Request,
    res: Response,
  ): Promise<RouteResult> {
    if (spec.request.body && req.body === undefined && hasBody(req))
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be application/json.');
    const request =
      spec.multipartBody && req.is('multipart/form-data')
        ? { ...spec.request, body: spec.multipartBody }
        : spec.request;
    const input = parse(request, req) as Input<S>;
    // Valid ids only: parse has refused the request otherwise.
    const { chatId, runId } = req.params as Record<string, unknown>;
    addLogContext({
      chatId: typeof chatId === 'string' ? chatId : undefined,
      runId: typeof runId === 'string' ? runId : undefined,
    });
    return spec.handler(input, req, res);
  }

  /**
   * Answers a POST to `prefix/<name>` that no route took, after the auth kind's guards, with what
   * `refuse` returns: a refusal, not an operation, so the document lists no operation for it.
   */
  refuseOthers(prefix: string, auth: AuthKind, refuse: (name: string) => AppError): void {
    const applies = (req: Request) => req.method === 'POST' && /^\/[^/]+$/.test(req.path);
    const guards = auth === 'apiKey' ? this.guards.apiKey([]) : this.guards[auth];
    this.router.use(
      prefix,
      ...guards.map(
        (guard): RequestHandler =>
          (req, res, next) =>
            applies(req) ? guard(req, res, next) : next(),
      ),
      (req: Request, _res: Response, next: (err?: unknown) => void) =>
        next(applies(req) ? refuse(decodedSegment(req.path.slice(1))) : undefined),
    );
  }

  /**
   * Mounted after every route: a method a known path does not serve answers 405 with `Allow`,
   * not 404, so a client can tell a wrong method from a wrong path. OPTIONS falls through to
   * Express's own answer.
   */
  methodNotAllowed(): void {
    const methods = new Map<string, Set<string>>();
    for (const { method, path } of this.routes) {
      const set = methods.get(path) ?? new Set<string>();
      set.add(method.toUpperCase());
      if (method === 'get') set.add('HEAD');
      methods.set(path, set);
    }
    for (const [path, allowed] of methods) {
      const allow = [...allowed].sort().join(', ');
      this.router.all(path, (req, _res, next) => {
        if (req.method === 'OPTIONS') return next();
        throw new AppError(
          'METHOD_NOT_ALLOWED',
          `${req.method} is not allowed here; use ${allow}.`,
          undefined,
          {
            allow,
          },
        );
      });
    }
  }

  document(servers: { url: string }[] = []) {
    return new OpenApiGeneratorV31(this.registry.definitions).generateDocument({
      openapi: '3.1.0',
      info: {
        title: 'Agent Chat and Tool Service',
        version: '1.0.0',
        description:
          'Chats with an asynchronous agent, plan approval, media tools, uploads and signed webhooks.',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers,
    });
  }

  private registerDocument<S extends RequestSchema>(spec: RouteSpec<S>): void {
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of routeErrorCodes(spec as unknown as RouteSpec<RequestSchema>))
      byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
    const responses: Record<string, object> = {};
    for (const [status, r] of Object.entries(spec.responses)) {
      responses[status] = {
        description: r.description,
        ...(r.headers ? { headers: r.headers } : {}),
        ...(r.links ? { links: r.links } : {}),
        ...(r.schema
          ? {
              content: {
                [r.mediaType ?? 'application/json']: {
                  schema: r.schema,
                  ...(r.example === undefined ? {} : { example: r.example }),
                },
              },
            }
          : {}),
      };
    }
    for (const [status, errorCodes] of byStatus) {
      if (responses[String(status)])
        throw new Error(
          `${spec.operationId}: ${status} is both an answer and an error (${errorCodes.join(', ')})`,
        );
      responses[String(status)] = {
        description: `Error: ${errorCodes.join(', ')}`,
        ...(status === 429 ? { headers: tooManyRequestsHeaders(errorCodes) } : {}),
        content: {
          'application/json': {
            schema: errorSchema,
            // One example per code, named after it: what each refusal looks like.
            examples: Object.fromEntries(
              errorCodes.map((code) => [code, { summary: code, value: errorExample(code) }]),
            ),
          },
        },
      };
    }
    const bodySchema = spec.request.body;
    this.registry.registerPath({
      method: spec.method,
      // Express's `:name` and `*name` (wildcard) parameters are both `{name}` in OpenAPI.
      path: spec.path.replace(/[:*](\w+)/g, '{$1}'),
      operationId: spec.operationId,
      summary: spec.summary,
      tags: [spec.tag],
      security: spec.auth === 'none' ? [] : [{ [spec.auth]: [] }],
      ...(spec.extension ? { 'x-extension': true } : {}),
      request: {
        ...(spec.request.params ? { params: spec.request.params as z.ZodObject } : {}),
        ...(spec.request.query ? { query: spec.request.query as z.ZodObject } : {}),
        ...(spec.request.headers ? { headers: spec.request.headers as z.ZodObject } : {}),
        ...(bodySchema
          ? {
              body: {
                // A JSON body whose fields are all optional may be left out: the handler reads it as {}.
                required: spec.bodyMediaType !== undefined || !bodySchema.safeParse({}).success,
                content: {
                  [spec.bodyMediaType ?? 'application/json']: { schema: bodySchema },
                  ...(spec.multipartBody ? { 'multipart/form-data': { schema: spec.multipartBody } } : {}),
                },
              },
            }
          : {}),
      },
      responses,
    });
  }
}
