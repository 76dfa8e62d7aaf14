import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the fake answers to one Chat Completions request. */
export type FakeCompletion =
  | { kind: 'stream'; text?: string[]; toolCalls?: { id: string; name: string; argumentChunks: string[] }[] }
  | { kind: 'error'; status: number; message?: string }
  | { kind: 'hang' };

/**
 * An OpenAI-compatible Chat Completions server on loopback, speaking the real streaming protocol
 * (server-sent events of `chat.completion.chunk` objects, then `data: [DONE]`).
 */
export interface FakeOpenAI {
  baseURL: string;
  requests: { body: Record<string, unknown>; authorization: string | undefined }[];
  script(...answers: FakeCompletion[]): void;
  close(): Promise<void>;
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const answers: FakeCompletion[] = [];
  const requests: FakeOpenAI['requests'] = [];
  const hanging = new Set<ServerResponse>();

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      requests.push({
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
        authorization: req.headers.authorization,
      });
      const answer = answers.shift() ?? { kind: 'stream', text: ['ok'] };
      if (answer.kind === 'hang') {
        hanging.add(res);
        return;
      }
      if (answer.kind === 'error') {
        res
          .writeHead(answer.status, { 'content-type': 'application/json' })
          .end(
            JSON.stringify({ error: { message: answer.message ?? 'fake error', type: 'fake', code: null } }),
          );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1, model: 'fake-model' };
      const send = (delta: Record<string, unknown>, finish: string | null = null) =>
        res.write(
          `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
        );
      send({ role: 'assistant', content: '' });
      for (const piece of answer.text ?? []) send({ content: piece });
      (answer.toolCalls ?? []).forEach((call, index) => {
        call.argumentChunks.forEach((args, i) =>
          send({
            tool_calls: [
              i === 0
                ? { index, id: call.id, type: 'function', function: { name: call.name, arguments: args } }
                : { index, function: { arguments: args } },
            ],
          }),
        );
      });
      send({}, answer.toolCalls?.length ? 'tool_calls' : 'stop');
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...more) => answers.push(...more),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
