import { Component, type RefObject } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
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
  type ToolAsset,
  type ToolResult,
  type Waitpoint,
} from '../types';
import {
  Assets,
  Empty,
  ErrorNote,
  FilePicker,
  Json,
  Loading,
  Media,
  Time,
  credits,
  useFocusAfterGoing,
} from '../ui';

/**
 * Messages are read a page at a time, newest first: a long chat opens on its latest page with one
 * request and a bounded page, and older pages load as the person scrolls up.
 */
const PAGE_SIZE = 50;

interface MessagePage {
  /** Oldest first, as they are shown. */
  messages: Message[];
  /** The cursor of the page before these, or null at the chat's first message. */
  older: string | null;
}

async function messagePage(chatId: string, cursor: string | null): Promise<MessagePage> {
  const params = new URLSearchParams({ limit: String(PAGE_SIZE), order: 'desc' });
  if (cursor) params.set('cursor', cursor);
  const page = await get<Page<Message>>(`${V1}/chats/${chatId}/messages?${params}`);
  return { messages: page.data.reverse(), older: page.nextCursor };
}

/**
 * The latest page read again (after a turn) joined to what is shown, or null when it does not
 * reach what is shown (more than a page arrived meanwhile) and the latest page stands alone.
 */
function joinLatest(shown: Message[], latest: Message[]): Message[] | null {
  const first = latest[0];
  if (!first) return shown;
  const at = shown.findIndex((m) => m.id === first.id);
  return at === -1 ? null : [...shown.slice(0, at), ...latest];
}

const messageElementId = (id: string) => `message-${id}`;

function ToolCallView(props: {
  toolName: string;
  status: string;
  input: unknown;
  result?: ToolResult | null;
  error?: string | null;
  /** The result's files to show; the message around it may show them itself. */
  assets?: ToolAsset[];
}) {
  const { toolName, status, input, result, error } = props;
  const assets = props.assets ?? result?.assets ?? [];
  return (
    <details class="tool" open={assets.length > 0}>
      <summary>
        Tool <code>{toolName}</code>: {status.toLowerCase()}
        {result && ` · ${credits(result.creditCost)}`}
      </summary>
      <h3>Input</h3>
      <Json value={input} label={`${toolName} input`} />
      {result && (
        <>
          <h3>Output</h3>
          <Json value={result.output} label={`${toolName} output`} />
          <Assets assets={assets} />
        </>
      )}
      {error && <p class="error">{error}</p>}
    </details>
  );
}

/** A file's address without its signature: one file, however often its URL was signed. */
const fileOf = (url: string) => new URL(url, location.href).pathname;

function Blocks({ message }: { message: Message }) {
  const results = new Map<string, Extract<ContentBlock, { type: 'tool_result' }>>();
  for (const b of message.contentBlocks) if (b.type === 'tool_result') results.set(b.toolCallId, b);
  const shownIds = new Set(message.contentBlocks.map((b) => ('attachmentId' in b ? b.attachmentId : null)));
  const byId = new Map(message.attachments.map((a) => [a.id, a]));
  // A tool's result that the message shows as its own media (the reply's image) is shown there, once.
  const shownFiles = new Set([
    ...message.contentBlocks.flatMap((b) => ('url' in b ? [fileOf(b.url)] : [])),
    ...message.attachments.map((a) => fileOf(a.url)),
  ]);
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
                assets={r?.result?.assets.filter((a) => !shownFiles.has(fileOf(a.url)))}
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

/**
 * One message, drawn again only when it changes: a page loaded above, or each piece of a run's
 * live text, leaves the hundreds already shown alone.
 */
class MessageItem extends Component<{ message: Message }> {
  shouldComponentUpdate(next: { message: Message }): boolean {
    return next.message !== this.props.message;
  }

  render({ message }: { message: Message }) {
    return (
      <li id={messageElementId(message.id)} class={`message ${message.role}`}>
        <span class="role">{message.role === 'user' ? 'You' : 'Agent'}</span>
        <Blocks message={message} />
      </li>
    );
  }
}

/** Who decided, as the waitpoint records it: always this user, through one transport or another. */
function decider(waitpoint: Waitpoint): string {
  const by = waitpoint.decidedBy;
  if (!by) return '';
  if (by.sessionId) return ' by you, in the console,';
  if (by.via === 'mcp') return ' by you, through an assistant (MCP),';
  return ' by you, with an API key,';
}

/** How a plan no longer pending ended, in words. */
const PLAN_ENDINGS: Record<Waitpoint['status'], string> = {
  PENDING: '',
  APPROVED: 'Approved',
  REJECTED: 'Rejected',
  CANCELLED: 'Cancelled with its run',
  EXPIRED: 'Expired without a decision',
};

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
  const heading = useRef<HTMLHeadingElement>(null);
  const pending = waitpoint.status === 'PENDING';
  const decide = async (approved: boolean, form: HTMLFormElement) => {
    const feedback = String(new FormData(form).get('feedback') ?? '').trim();
    // The buttons go (disabled now, gone once decided): the focus waits on the plan's heading.
    heading.current?.focus();
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
      <h2 ref={heading} tabIndex={-1}>
        Plan {pending ? 'waiting for your approval' : waitpoint.status.toLowerCase()}
      </h2>
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
          {PLAN_ENDINGS[waitpoint.status]}
          {decider(waitpoint)} <Time iso={waitpoint.decidedAt ?? waitpoint.resolvedAt} />
          {waitpoint.feedback && <> · feedback: “{waitpoint.feedback}”</>}
        </p>
      )}
    </section>
  );
}

/** Cancel run, while the run is active; at its end, the run's status takes the focus this had. */
function CancelRun({
  run,
  status,
  onError,
}: {
  run: RunSnapshot;
  status: RefObject<HTMLElement | null>;
  onError: (e: unknown) => void;
}) {
  const [cancelling, setCancelling] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  useFocusAfterGoing(button, () => status.current);
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
    <button ref={button} type="button" class="danger" disabled={cancelling} onClick={() => void cancel()}>
      Cancel run
    </button>
  );
}

function RunView({
  run,
  reconnecting,
  onError,
  label = 'Current run',
}: {
  run: RunSnapshot;
  reconnecting: boolean;
  onError: (e: unknown) => void;
  label?: string;
}) {
  const active = !isTerminal(run.status);
  const status = useRef<HTMLSpanElement>(null);
  return (
    <section class="run" aria-label={label} aria-busy={active}>
      <div class="row">
        <span ref={status} tabIndex={-1} class={`status status-${run.status.toLowerCase()}`} role="status">
          {active && run.cancelRequestedAt ? 'Run cancelling…' : `Run ${run.status.toLowerCase()}`}
        </span>
        {active && <CancelRun run={run} status={status} onError={onError} />}
      </div>
      {active && reconnecting && (
        <p class="notice" role="status">
          Connection lost: reconnecting… The run goes on meanwhile, and what it wrote will show.
        </p>
      )}
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

/**
 * The chat's latest run, ended or not (the one a reload shows, as the page showed it live), or
 * the run a refused send names.
 */
async function latestRunOf(
  chatId: string,
  messages: Message[],
  refusal?: ApiError,
): Promise<RunSnapshot | null> {
  const named = (refusal?.body.activeRun as { id?: string } | undefined)?.id;
  const runId = named ?? [...messages].reverse().find((m) => m.runId)?.runId;
  if (!runId) return null;
  return get<RunSnapshot>(`${V1}/chats/${chatId}/runs/${runId}`);
}

/** Runs that ended, by id: an ended run does not change, so each is read once a page load. */
const endedRuns = new Map<string, Promise<RunSnapshot>>();

/**
 * How an earlier turn that left no answer ended (cancelled, its plan rejected or expired, failed),
 * under it, as the run showed it live: read back from the run's snapshot, so a reload shows it too.
 * Drawn again only when the run read comes in.
 */
class RunOutcome extends Component<
  { chatId: string; runId: string; onError: (e: unknown) => void },
  { run: RunSnapshot | null }
> {
  state = { run: null as RunSnapshot | null };

  componentDidMount(): void {
    const { chatId, runId } = this.props;
    let read = endedRuns.get(runId);
    if (!read) {
      read = get<RunSnapshot>(`${V1}/chats/${chatId}/runs/${runId}`);
      endedRuns.set(runId, read);
      read.catch(() => endedRuns.delete(runId));
    }
    read.then((run) => this.setState({ run }), this.props.onError);
  }

  shouldComponentUpdate(_next: unknown, next: { run: RunSnapshot | null }): boolean {
    return next.run !== this.state.run;
  }

  render() {
    const { run } = this.state;
    if (!run || !isTerminal(run.status)) return null;
    return (
      <li class="outcome">
        <RunView run={run} reconnecting={false} onError={this.props.onError} label="Earlier run" />
      </li>
    );
  }
}

/** Set by a send that opens its new chat: the new chat's composer takes the focus the old one had. */
let focusNextComposer = false;

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
  const text = useRef<HTMLTextAreaElement>(null);
  const refusal = refuseFiles(files);

  useEffect(() => {
    if (focusNextComposer) text.current?.focus();
    focusNextComposer = false;
  }, []);

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
        ref={text}
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
        <FilePicker
          label="Attach files"
          name="files"
          multiple
          accept="image/*,video/*,audio/*"
          files={files}
          onChange={setFiles}
        />
        <label class="check">
          <input type="checkbox" name="planMode" />
          Plan mode
        </label>
        <button type="submit" class="primary" disabled={busy || Boolean(refusal)}>
          Send
        </button>
      </div>
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
  const [older, setOlder] = useState<string | null>(null);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [run, setRun] = useState<RunSnapshot | null>(null);
  const [reconnecting, setReconnecting] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const stop = useRef<() => void>(() => undefined);
  /** What the next render does to the scroll position: go to the newest, or keep a message where it was. */
  const scroll = useRef<{ to: 'newest' } | { keep: string; top: number } | null>(null);
  const earlier = useRef<HTMLButtonElement>(null);
  const shown = useRef(messages);
  shown.current = messages;

  const follow = (first: RunSnapshot | { chatId: string; id: string }) => {
    stop.current();
    if ('status' in first) setRun(first);
    stop.current = followRun(first.chatId, first.id, {
      onSnapshot: (snapshot) => {
        setRun(snapshot);
        if (isTerminal(snapshot.status)) {
          // The stream ends at the terminal status: what the ending changed with it (a plan still
          // pending closed, a tool call cut short) is read from the final snapshot, as a reload is.
          const final = get<RunSnapshot>(`${V1}/chats/${snapshot.chatId}/runs/${snapshot.id}`);
          endedRuns.set(snapshot.id, final);
          final.then((ended) => setRun((shown) => (shown?.id === ended.id ? ended : shown)), setError);
          setNotice(null);
          void reload();
          onActivity();
        }
      },
      onError: setError,
      onReconnecting: setReconnecting,
    });
  };

  /** The latest page, joined to the older ones already shown. */
  const reload = async (): Promise<void> => {
    if (!chat) return;
    const latest = await messagePage(chat.id, null);
    if (!(shown.current && joinLatest(shown.current, latest.messages))) setOlder(latest.older);
    setMessages((before) => (before && joinLatest(before, latest.messages)) ?? latest.messages);
  };

  const loadOlder = async (keepPosition: boolean) => {
    if (!chat || !older || loadingOlder) return;
    setLoadingOlder(true);
    try {
      const page = await messagePage(chat.id, older);
      const first = messages?.[0];
      const element = first && document.getElementById(messageElementId(first.id));
      // Scrolled up to the top: the page read goes above, and what the person was reading stays put.
      // Asked for with the button: the button stays put, the page read just below it.
      if (keepPosition && first && element)
        scroll.current = { keep: first.id, top: element.getBoundingClientRect().top };
      setMessages((shown) => [...page.messages, ...(shown ?? [])]);
      setOlder(page.older);
    } catch (e) {
      setError(e);
    } finally {
      setLoadingOlder(false);
    }
  };

  useEffect(() => {
    if (!chat) return;
    messagePage(chat.id, null)
      .then(async (page) => {
        scroll.current = { to: 'newest' };
        setMessages(page.messages);
        setOlder(page.older);
        const r = await latestRunOf(chat.id, page.messages);
        if (!r) return;
        // Ended, it shows as it did live (its status, its plan's decision, its error).
        setRun(r);
        // A run that ended between the two reads wrote its answer after the first: read it again.
        if (isTerminal(r.status)) await reload();
        else follow(r);
      })
      .catch(setError);
    return () => stop.current();
  }, [chat?.id]);

  useLayoutEffect(() => {
    const want = scroll.current;
    scroll.current = null;
    if (!want) return;
    if ('to' in want) return void window.scrollTo(0, document.documentElement.scrollHeight);
    const element = document.getElementById(messageElementId(want.keep));
    if (element) window.scrollBy(0, element.getBoundingClientRect().top - want.top);
  }, [messages]);

  // Older messages load when the top of the list comes near the window, once the newest are shown.
  useEffect(() => {
    const button = earlier.current;
    if (!button || loadingOlder) return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) void loadOlder(true);
      },
      { rootMargin: '600px 0px 0px 0px' },
    );
    observer.observe(button);
    return () => observer.disconnect();
  }, [older, loadingOlder, messages]);

  // The runs that answered: any other turn's run ended without a reply, and says how under it.
  const answered = new Set(messages?.flatMap((m) => (m.role === 'assistant' && m.runId ? [m.runId] : [])));

  return (
    <div class="chat">
      <ErrorNote error={error} />
      {messages === null && !error && <Loading what="messages" />}
      {older && (
        <button ref={earlier} type="button" aria-busy={loadingOlder} onClick={() => void loadOlder(false)}>
          {loadingOlder ? 'Loading earlier messages…' : 'Show earlier messages'}
        </button>
      )}
      {messages?.length === 0 && !run && <Empty>No messages yet. Write the first one below.</Empty>}
      <ol class="messages plain" aria-label="Messages">
        {messages?.map((m) => [
          <MessageItem key={m.id} message={m} />,
          m.role === 'user' && m.runId && m.runId !== run?.id && !answered.has(m.runId) && (
            <RunOutcome key={`outcome-${m.runId}`} chatId={m.chatId} runId={m.runId} onError={setError} />
          ),
        ])}
      </ol>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {run && <RunView run={run} reconnecting={reconnecting} onError={setError} />}
      <Composer
        chat={chat}
        onQueued={(turn) => {
          setError(null);
          onActivity();
          if (!chat) {
            focusNextComposer = true;
            return navigate(`/chats/${turn.chatId}`);
          }
          scroll.current = { to: 'newest' };
          void reload();
          follow({ chatId: turn.chatId, id: turn.runId });
        }}
        onRunActive={(refusal) => {
          if (!chat) return setError(refusal);
          setNotice('This chat already has a run in progress; here it is. Send again once it ends.');
          latestRunOf(chat.id, messages ?? [], refusal)
            .then((r) => r && follow(r))
            .catch(setError);
        }}
      />
    </div>
  );
}
