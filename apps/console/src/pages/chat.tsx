import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, V1, get, post } from '../api';
import { limits, refuseFiles } from '../limits';
import { followRun } from '../live';
import { navigate } from '../router';
import {
  isTerminal,
  type Chat,
  type ContentBlock,
  type Message,
  type Page,
  type QueuedTurn,
  type RunSnapshot,
  type ToolResult,
  type Waitpoint,
} from '../types';
import { Assets, Empty, ErrorNote, Json, Loading, Media, Time } from '../ui';

/** Messages are rendered a page at a time, newest last, so a long chat stays quick to scroll. */
const SHOWN_STEP = 50;

async function allMessages(chatId: string): Promise<Message[]> {
  const messages: Message[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ limit: '100' });
    if (cursor) params.set('cursor', cursor);
    const page: Page<Message> = await get<Page<Message>>(`${V1}/chats/${chatId}/messages?${params}`);
    messages.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return messages;
}

function ToolCallView(props: {
  toolName: string;
  status: string;
  input: unknown;
  result?: ToolResult | null;
  error?: string | null;
}) {
  const { toolName, status, input, result, error } = props;
  return (
    <details class="tool" open={Boolean(result?.assets.length)}>
      <summary>
        Tool <code>{toolName}</code>: {status.toLowerCase()}
        {result && ` · ${result.creditCost} credits`}
      </summary>
      <h3>Input</h3>
      <Json value={input} label={`${toolName} input`} />
      {result && (
        <>
          <h3>Output</h3>
          <Json value={result.output} label={`${toolName} output`} />
          <Assets assets={result.assets} />
        </>
      )}
      {error && <p class="error">{error}</p>}
    </details>
  );
}

function Blocks({ message }: { message: Message }) {
  const results = new Map<string, Extract<ContentBlock, { type: 'tool_result' }>>();
  for (const b of message.contentBlocks) if (b.type === 'tool_result') results.set(b.toolCallId, b);
  const shownIds = new Set(message.contentBlocks.map((b) => ('attachmentId' in b ? b.attachmentId : null)));
  const byId = new Map(message.attachments.map((a) => [a.id, a]));
  return (
    <>
      {message.contentBlocks.map((b, i) => {
        switch (b.type) {
          case 'text':
            return (
              <p key={i} class="text">
                {b.text}
              </p>
            );
          case 'image':
          case 'video':
          case 'audio': {
            const a = b.attachmentId ? byId.get(b.attachmentId) : undefined;
            return (
              <Media
                key={i}
                url={b.url}
                mimeType={a?.mimeType ?? `${b.type}/*`}
                name={a?.filename ?? b.type}
              />
            );
          }
          case 'tool_use': {
            const r = results.get(b.toolCallId);
            return (
              <ToolCallView
                key={i}
                toolName={b.toolName}
                status={r ? (r.error ? 'FAILED' : 'SUCCEEDED') : 'RUNNING'}
                input={b.input}
                result={r?.result}
                error={r?.error}
              />
            );
          }
          default:
            return null;
        }
      })}
      {message.attachments
        .filter((a) => !shownIds.has(a.id))
        .map((a) => (
          <Media key={a.id} url={a.url} mimeType={a.mimeType} name={a.filename} />
        ))}
    </>
  );
}

/** Who decided, as the waitpoint records it: always this user, through one transport or another. */
function decider(waitpoint: Waitpoint): string {
  const by = waitpoint.decidedBy;
  if (!by) return '';
  if (by.sessionId) return ' by you, in the console,';
  if (by.via === 'mcp') return ' by you, through an assistant (MCP),';
  return ' by you, with an API key,';
}

function PlanView({
  run,
  waitpoint,
  onError,
}: {
  run: RunSnapshot;
  waitpoint: Waitpoint;
  onError: (e: unknown) => void;
}) {
  const [busy, setBusy] = useState(false);
  const pending = waitpoint.status === 'PENDING';
  const decide = async (approved: boolean, form: HTMLFormElement) => {
    const feedback = String(new FormData(form).get('feedback') ?? '').trim();
    setBusy(true);
    try {
      await post(`${V1}/chats/${run.chatId}/runs/${run.id}/waitpoints/${waitpoint.id}/complete`, {
        approved,
        ...(feedback ? { feedback } : {}),
        ...(waitpoint.planHash ? { planHash: waitpoint.planHash } : {}),
      });
    } catch (e) {
      onError(
        e instanceof ApiError && e.code === 'PLAN_CHANGED'
          ? new Error(`${e.message} The plan changed while you read it: review the new plan below.`)
          : e,
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="plan" aria-label="Plan">
      <h2>Plan {pending ? 'waiting for your approval' : waitpoint.status.toLowerCase()}</h2>
      <p>{waitpoint.plan.summary}</p>
      <ol>
        {waitpoint.plan.steps.map((s, i) => (
          <li key={i}>
            <code>{s.toolName}</code>: {s.reason}
            <Json value={s.input} label={`Step ${i + 1} input`} />
          </li>
        ))}
      </ol>
      {pending ? (
        <form onSubmit={(e) => e.preventDefault()}>
          <label>
            Feedback
            <textarea name="feedback" rows={2} maxLength={2000} />
          </label>
          <div class="row">
            {(
              [
                ['Approve', true, 'primary'],
                ['Reject', false, 'danger'],
              ] as const
            ).map(([label, approved, kind]) => (
              <button
                key={label}
                type="button"
                class={kind}
                disabled={busy}
                onClick={(e) => void decide(approved, e.currentTarget.form!)}
              >
                {label}
              </button>
            ))}
          </div>
        </form>
      ) : (
        <p class="muted">
          {waitpoint.status === 'APPROVED'
            ? 'Approved'
            : waitpoint.status === 'REJECTED'
              ? 'Rejected'
              : 'Closed'}
          {decider(waitpoint)} <Time iso={waitpoint.decidedAt ?? waitpoint.resolvedAt} />
          {waitpoint.feedback && <> · feedback: “{waitpoint.feedback}”</>}
        </p>
      )}
    </section>
  );
}

function RunView({ run, onError }: { run: RunSnapshot; onError: (e: unknown) => void }) {
  const [cancelling, setCancelling] = useState(false);
  const active = !isTerminal(run.status);
  const cancel = async () => {
    setCancelling(true);
    try {
      await post(`${V1}/chats/${run.chatId}/runs/${run.id}/cancel`);
    } catch (e) {
      onError(e);
    } finally {
      setCancelling(false);
    }
  };
  return (
    <section class="run" aria-label="Current run" aria-busy={active}>
      <div class="row">
        <span class={`status status-${run.status.toLowerCase()}`} role="status">
          Run {run.status.toLowerCase()}
        </span>
        {active && (
          <button type="button" class="danger" disabled={cancelling} onClick={() => void cancel()}>
            Cancel run
          </button>
        )}
      </div>
      {run.waitpoints.map((w) => (
        <PlanView key={w.id} run={run} waitpoint={w} onError={onError} />
      ))}
      {active && (
        <>
          {run.toolCalls.map((t) => (
            <ToolCallView key={t.id} {...t} />
          ))}
          {run.text && (
            <p class="text live" aria-live="polite">
              {run.text}
            </p>
          )}
        </>
      )}
      {run.error && <p class="error">{run.error}</p>}
    </section>
  );
}

/** The id of the chat's run that has not ended, if any: the one a reload or a refused send shows. */
async function activeRunOf(
  chatId: string,
  messages: Message[],
  refusal?: ApiError,
): Promise<RunSnapshot | null> {
  const named = (refusal?.body.activeRun as { id?: string } | undefined)?.id;
  const runId = named ?? [...messages].reverse().find((m) => m.runId)?.runId;
  if (!runId) return null;
  return get<RunSnapshot>(`${V1}/chats/${chatId}/runs/${runId}`);
}

function Composer({
  chat,
  onQueued,
  onRunActive,
}: {
  chat: Chat | null;
  onQueued: (turn: QueuedTurn) => void;
  onRunActive: (refusal: ApiError) => void;
}) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [files, setFiles] = useState<File[]>([]);
  const filesInput = useRef<HTMLInputElement>(null);
  const refusal = refuseFiles(files);

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const text = String(data.get('text'));
    const planMode = data.get('planMode') === 'on';
    if (refusal) return setError(new Error(refusal));
    setBusy(true);
    setError(null);
    try {
      let body: unknown;
      if (files.length) {
        const multipart = new FormData();
        multipart.set('text', text);
        multipart.set('planMode', String(planMode));
        if (chat) multipart.set('chatId', chat.id);
        for (const f of files) multipart.append('file', f);
        body = multipart;
      } else body = { text, planMode, ...(chat ? { chatId: chat.id } : {}) };
      const turn = await post<QueuedTurn>(`${V1}/completions`, body);
      form.reset();
      setFiles([]);
      onQueued(turn);
    } catch (e) {
      if (e instanceof ApiError && e.code === 'RUN_ACTIVE') onRunActive(e);
      else setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="composer" onSubmit={(e) => void submit(e)}>
      <label class="sr-only" for="composer-text">
        Message
      </label>
      <textarea
        id="composer-text"
        name="text"
        rows={3}
        required
        maxLength={limits.maxText}
        placeholder="Message the agent"
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) e.currentTarget.form?.requestSubmit();
        }}
      />
      <div class="row wrap">
        <label class="file">
          Attach files
          <input
            ref={filesInput}
            type="file"
            name="files"
            multiple
            accept="image/*,video/*,audio/*"
            onChange={(e) => setFiles([...(e.currentTarget.files ?? [])])}
          />
        </label>
        <label class="check">
          <input type="checkbox" name="planMode" />
          Plan mode
        </label>
        <button type="submit" class="primary" disabled={busy || Boolean(refusal)}>
          Send
        </button>
      </div>
      {files.length > 0 && (
        <p class="muted">
          {files.length} file{files.length > 1 ? 's' : ''}: {files.map((f) => f.name).join(', ')}
        </p>
      )}
      {refusal && (
        <p class="error" role="alert">
          {refusal}
        </p>
      )}
      <ErrorNote error={error} />
    </form>
  );
}

export function ChatView({ chat, onActivity }: { chat: Chat | null; onActivity: () => void }) {
  const [messages, setMessages] = useState<Message[] | null>(chat ? null : []);
  const [shown, setShown] = useState(SHOWN_STEP);
  const [run, setRun] = useState<RunSnapshot | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const stop = useRef<() => void>(() => undefined);

  const follow = (first: RunSnapshot | { chatId: string; id: string }) => {
    stop.current();
    if ('status' in first) setRun(first);
    stop.current = followRun(
      first.chatId,
      first.id,
      (snapshot) => {
        setRun(snapshot);
        if (isTerminal(snapshot.status)) {
          setNotice(null);
          void reload();
          onActivity();
        }
      },
      setError,
    );
  };

  const reload = async (): Promise<Message[]> => {
    if (!chat) return [];
    const list = await allMessages(chat.id);
    setMessages(list);
    return list;
  };

  useEffect(() => {
    if (!chat) return;
    reload()
      .then((list) => activeRunOf(chat.id, list))
      // A run that ended between the two reads wrote its answer after the first: read it again.
      .then((r) => {
        if (r && isTerminal(r.status)) return reload();
        if (r) follow(r);
      })
      .catch(setError);
    return () => stop.current();
  }, [chat?.id]);

  const visible = messages ? messages.slice(Math.max(0, messages.length - shown)) : [];
  return (
    <div class="chat">
      <ErrorNote error={error} />
      {messages === null && !error && <Loading what="messages" />}
      {messages && messages.length > shown && (
        <button type="button" onClick={() => setShown((n) => n + SHOWN_STEP)}>
          Show earlier messages
        </button>
      )}
      {messages?.length === 0 && !run && <Empty>No messages yet. Write the first one below.</Empty>}
      <ol class="messages plain" aria-label="Messages">
        {visible.map((m) => (
          <li key={m.id} class={`message ${m.role}`}>
            <span class="role">{m.role === 'user' ? 'You' : 'Agent'}</span>
            <Blocks message={m} />
          </li>
        ))}
      </ol>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {run && <RunView run={run} onError={setError} />}
      <Composer
        chat={chat}
        onQueued={(turn) => {
          setError(null);
          onActivity();
          if (!chat) return navigate(`/chats/${turn.chatId}`);
          void reload();
          follow({ chatId: turn.chatId, id: turn.runId });
        }}
        onRunActive={(refusal) => {
          if (!chat) return setError(refusal);
          setNotice('This chat already has a run in progress; here it is. Send again once it ends.');
          activeRunOf(chat.id, messages ?? [], refusal)
            .then((r) => r && follow(r))
            .catch(setError);
        }}
      />
    </div>
  );
}
