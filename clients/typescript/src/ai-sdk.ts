import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import {
  AgentChatError,
  createAgentChatClient,
  type ClientOptions,
  type CompletionRequest,
  type RunEvent,
  type RunSnapshot,
} from './client.js';

/** What the transport adds to the client's options. */
export interface ChatTransportOptions extends ClientOptions {
  /**
   * What a send does while the chat's run is still going (the API's `onActiveRun`): `reject` (the
   * default) fails it with `409 RUN_ACTIVE`, `enqueue` queues it behind the run, `interrupt` stops
   * the run and answers this one instead.
   */
  onActiveRun?: 'reject' | 'enqueue' | 'interrupt';
  /**
   * Told the service's id of a chat the first send created, when `useChat`'s `id` was not one: keep
   * it (in the URL, say) and give it as `id` after a reload, so the chat and its run resume.
   */
  onChatCreated?: (serviceChatId: string, uiChatId: string) => void;
  /** What every send carries besides its text and images (settings, metadata, planMode). */
  sendOptions?: Omit<CompletionRequest, 'text' | 'chatId' | 'image_urls' | 'onActiveRun'>;
  /**
   * Whether `stop()` cancels the run (the default), or only stops reading it. useChat also stops
   * when its component unmounts or its `id` changes: with `false` a run goes on when its page is
   * left, to be resumed later, and the app cancels it itself (the client's `cancelRun`).
   */
  stopCancelsRun?: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TERMINAL = new Set(['COMPLETE', 'FAILED', 'CANCELLED']);

/**
 * A transport for the AI SDK's `useChat` (and its `Chat` classes): a send is a turn of the service's
 * chat, and the answer streams from the run's live stream as UI message chunks; `stop()` cancels
 * the run (see `stopCancelsRun`); `resumeStream()` (or `useChat({ resume: true })` after a reload) follows the chat's run
 * still going, from its snapshot; `regenerate()` asks for a new answer to the same message, the
 * earlier kept. The assistant message's id is the service's (`assistantMessageId`), its metadata
 * `{ chatId, runId }`, tool calls are dynamic tool parts, and a plan waiting for approval is a
 * `data-plan` part (decide it with the client's `decidePlan`; the stream goes on after it).
 *
 * Give `useChat` the service's chat id as `id` to continue a chat; any other id starts a new chat on
 * its first send (see `onChatCreated`).
 */
export function createAgentChatTransport(options: ChatTransportOptions): ChatTransport<UIMessage> {
  const client = createAgentChatClient(options);
  const serviceChats = new Map<string, string>();
  const serviceChatOf = (uiChatId: string) => (UUID.test(uiChatId) ? uiChatId : serviceChats.get(uiChatId));

  async function send(uiChatId: string, message: UIMessage | undefined) {
    const text = (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
    const imageUrls = (message?.parts ?? []).flatMap((part) =>
      part.type === 'file' && /^https?:/.test(part.url) ? [part.url] : [],
    );
    const chatId = serviceChatOf(uiChatId);
    const turn = await client.send({
      ...options.sendOptions,
      text,
      ...(chatId ? { chatId } : {}),
      ...(imageUrls.length ? { image_urls: imageUrls } : {}),
      ...(options.onActiveRun ? { onActiveRun: options.onActiveRun } : {}),
    });
    if (!chatId) {
      serviceChats.set(uiChatId, turn.chatId);
      options.onChatCreated?.(turn.chatId, uiChatId);
    }
    return turn;
  }

  /**
   * A new answer to the chat's latest user message: the answer `messageId` names (the service's
   * assistant message ids are the UI's), else the chat's latest run's message.
   */
  async function regenerate(uiChatId: string, messageId: string | undefined) {
    const chatId = serviceChatOf(uiChatId);
    if (!chatId) throw new Error('This chat has no answer to regenerate yet.');
    let target = messageId && UUID.test(messageId) ? messageId : undefined;
    if (!target) {
      const { data } = await client.api.GET('/api/v1/chats/{chatId}/runs', {
        params: { path: { chatId }, query: { limit: 1 } },
      });
      target = data?.data[0]?.messageId;
    }
    if (!target) throw new Error('This chat has no answer to regenerate yet.');
    const { data, error, response } = await client.api.POST(
      '/api/v1/chats/{chatId}/messages/{messageId}/regenerate',
      { params: { path: { chatId, messageId: target } }, body: { ...options.sendOptions } },
    );
    if (!data) throw new AgentChatError(response.status, error as never);
    return data;
  }

  /** The run's events as UI message chunks, until its end; an abort of `signal` cancels the run. */
  function chunks(ids: { chatId: string; runId: string }, signal: AbortSignal | undefined) {
    const stop = new AbortController();
    const cancel = () => {
      stop.abort();
      if (options.stopCancelsRun !== false)
        void client.api
          .POST('/api/v1/chats/{chatId}/runs/{runId}/cancel', { params: { path: ids } })
          .catch(() => undefined);
    };
    return new ReadableStream<UIMessageChunk>({
      async start(controller) {
        if (signal?.aborted) {
          cancel();
          return controller.close();
        }
        signal?.addEventListener('abort', cancel, { once: true });
        const state = uiState(controller, ids);
        try {
          for await (const event of client.streamRun(ids, { signal: stop.signal })) {
            if (state.apply(event)) break;
          }
          controller.close();
        } catch (err) {
          if (stop.signal.aborted) {
            controller.enqueue({ type: 'abort', reason: 'stopped' });
            controller.close();
          } else controller.error(err);
        } finally {
          signal?.removeEventListener('abort', cancel);
        }
      },
      cancel,
    });
  }

  return {
    // A reconnect starts from the run's snapshot: the whole answer so far, from its beginning.
    resumeStreamIsReplay: true,

    async sendMessages({ trigger, chatId, messageId, messages, abortSignal }) {
      const turn =
        trigger === 'regenerate-message'
          ? await regenerate(chatId, messageId)
          : await send(chatId, messages.at(-1));
      return chunks(turn, abortSignal);
    },

    async reconnectToStream({ chatId, abortSignal }) {
      const serviceChat = serviceChatOf(chatId);
      if (!serviceChat) return null;
      const { data } = await client.api.GET('/api/v1/chats/{chatId}/runs', {
        params: { path: { chatId: serviceChat }, query: { status: 'QUEUED,RUNNING,WAITING', limit: 1 } },
      });
      const run = data?.data[0];
      return run ? chunks({ chatId: serviceChat, runId: run.id }, abortSignal) : null;
    },
  };
}

/**
 * The UI message of one run as its events arrive: `apply` turns each into chunks and says whether
 * it was the last. A `snapshot` (the stream's first event) replays the answer so far; a
 * `text.delta` with `replace` (a step retried from its start) resets the step and replays it.
 */
function uiState(
  controller: ReadableStreamDefaultController<UIMessageChunk>,
  ids: { chatId: string; runId: string },
) {
  let started = false;
  let text = '';
  let textPart = 0;
  let textOpen = false;
  const tools = new Map<string, RunSnapshot['toolCalls'][number]>();
  const emit = (chunk: UIMessageChunk) => controller.enqueue(chunk);

  const openText = () => {
    if (textOpen) return;
    textOpen = true;
    textPart++;
    emit({ type: 'text-start', id: `text-${textPart}` });
  };
  const closeText = () => {
    if (!textOpen) return;
    textOpen = false;
    emit({ type: 'text-end', id: `text-${textPart}` });
  };
  const addText = (delta: string) => {
    if (!delta) return;
    openText();
    text += delta;
    emit({ type: 'text-delta', id: `text-${textPart}`, delta });
  };
  const tool = (call: RunSnapshot['toolCalls'][number]) => {
    const known = tools.get(call.id);
    tools.set(call.id, call);
    closeText();
    if (!known)
      emit({
        type: 'tool-input-available',
        toolCallId: call.id,
        toolName: call.toolName,
        input: call.input,
        dynamic: true,
      });
    if (call.status === 'SUCCEEDED')
      emit({ type: 'tool-output-available', toolCallId: call.id, output: call.result, dynamic: true });
    if (call.status === 'FAILED')
      emit({
        type: 'tool-output-error',
        toolCallId: call.id,
        errorText: call.error ?? 'The tool call failed.',
        dynamic: true,
      });
  };
  const plan = (waitpoint: RunSnapshot['waitpoints'][number]) => {
    closeText();
    emit({ type: 'data-plan', id: waitpoint.id, data: waitpoint });
  };
  /** Ends the message for a terminal status; true when it was one. */
  const end = (status: string, error?: string | null): boolean => {
    if (!TERMINAL.has(status)) return false;
    closeText();
    emit({ type: 'finish-step' });
    if (status === 'FAILED') emit({ type: 'error', errorText: error ?? 'The run failed.' });
    else if (status === 'CANCELLED') emit({ type: 'abort', reason: 'cancelled' });
    else emit({ type: 'finish', finishReason: 'stop' });
    return true;
  };
  const start = (snapshot: { assistantMessageId?: string }) => {
    if (started) return;
    started = true;
    emit({
      type: 'start',
      ...(snapshot.assistantMessageId ? { messageId: snapshot.assistantMessageId } : {}),
      messageMetadata: { chatId: ids.chatId, runId: ids.runId },
    });
    emit({ type: 'start-step' });
  };

  return {
    apply(event: RunEvent): boolean {
      const data = event.data;
      switch (event.event) {
        case 'snapshot': {
          const snapshot = data as unknown as RunSnapshot;
          start(snapshot);
          addText(snapshot.text);
          for (const call of snapshot.toolCalls) tool(call);
          for (const waitpoint of snapshot.waitpoints) plan(waitpoint);
          return end(snapshot.status, snapshot.error);
        }
        case 'text.delta':
          start({});
          if (data.replace === true) {
            const whole = String(data.text);
            if (whole.startsWith(text)) return (addText(whole.slice(text.length)), false);
            // A retried step rewrote the answer: the step starts again, its tool calls replayed.
            textOpen = false;
            text = '';
            emit({ type: 'reset-step' });
            for (const call of tools.values()) {
              tools.delete(call.id);
              tool(call);
            }
            addText(whole);
          } else addText(String(data.text));
          return false;
        case 'tool.started':
        case 'tool.finished':
          start({});
          tool(data as unknown as RunSnapshot['toolCalls'][number]);
          return false;
        case 'waitpoint.opened':
        case 'waitpoint.resolved':
          start({});
          plan(data as unknown as RunSnapshot['waitpoints'][number]);
          return false;
        case 'status':
          start({});
          return end(String(data.status), data.error as string | undefined);
        default:
          return false;
      }
    },
  };
}
