import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, V1, del, get, patch } from '../api';
import { follow, navigate } from '../router';
import type { Chat, Page } from '../types';
import { Confirm, Empty, ErrorNote, Loading, ShortTime } from '../ui';
import { ChatView } from './chat';

const PAGE = 20;

function ChatItem({ chat, active, onChanged }: { chat: Chat; active: boolean; onChanged: () => void }) {
  const [mode, setMode] = useState<'view' | 'rename' | 'delete'>('view');
  const [error, setError] = useState<unknown>(null);
  const act = async (work: () => Promise<unknown>) => {
    setError(null);
    try {
      await work();
      setMode('view');
      onChanged();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <li class={active ? 'chat-item active' : 'chat-item'}>
      {mode === 'rename' ? (
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            const title = String(new FormData(e.currentTarget).get('title'));
            void act(() => patch(`${V1}/chats/${chat.id}`, { title }));
          }}
        >
          <input
            name="title"
            aria-label="Chat title"
            defaultValue={chat.title}
            maxLength={120}
            required
            ref={(el) => el?.focus()}
          />
          <button type="submit">Save</button>
          <button type="button" onClick={() => setMode('view')}>
            Keep
          </button>
        </form>
      ) : (
        <>
          {/* The list is narrow: the title takes its whole width, cut short with an ellipsis, and
              shows whole on hover (title) and to a screen reader (the link's text). */}
          <a
            href={`/chats/${chat.id}`}
            onClick={follow}
            aria-current={active ? 'page' : undefined}
            class="chat-title"
            title={chat.title}
          >
            {chat.title}
          </a>
          <div class="row chat-actions">
            <ShortTime iso={chat.lastMessageAt ?? chat.createdAt} />
            <button
              type="button"
              class="icon"
              aria-pressed={chat.isFavorite}
              aria-label={`Favorite ${chat.title}`}
              onClick={() =>
                void act(() => patch(`${V1}/chats/${chat.id}`, { isFavorite: !chat.isFavorite }))
              }
            >
              {chat.isFavorite ? '★' : '☆'}
            </button>
            {(
              [
                ['Rename', 'rename', '✎'],
                ['Delete', 'delete', '×'],
              ] as const
            ).map(([label, next, glyph]) => (
              <button
                key={next}
                type="button"
                class="icon"
                aria-label={`${label} ${chat.title}`}
                onClick={() => setMode(next)}
              >
                {glyph}
              </button>
            ))}
          </div>
        </>
      )}
      {mode === 'delete' && (
        <Confirm
          question={`Delete “${chat.title}”?`}
          yes="Delete chat"
          onYes={() =>
            void act(async () => {
              await del(`${V1}/chats/${chat.id}`);
              if (active) navigate('/chats');
            })
          }
          onNo={() => setMode('view')}
        />
      )}
      <ErrorNote error={error} />
    </li>
  );
}

function ChatList({ chatId, version }: { chatId: string | null; version: number }) {
  const [q, setQ] = useState('');
  const [favorites, setFavorites] = useState(false);
  const [chats, setChats] = useState<Chat[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [reload, setReload] = useState(0);
  const asked = useRef(0);

  const load = useCallback(
    async (cursor: string | null) => {
      const ask = ++asked.current;
      const params = new URLSearchParams({ limit: String(PAGE) });
      if (q.trim()) params.set('q', q.trim());
      if (favorites) params.set('favorite', 'true');
      if (cursor) params.set('cursor', cursor);
      try {
        const page = await get<Page<Chat>>(`${V1}/chats?${params}`);
        if (ask !== asked.current) return;
        setChats((before) => (cursor && before ? [...before, ...page.data] : page.data));
        setNext(page.nextCursor);
        setError(null);
      } catch (e) {
        if (ask === asked.current) setError(e);
      }
    },
    [q, favorites],
  );
  useEffect(() => void load(null), [load, reload, version]);

  return (
    <aside class="chat-list" aria-label="Chats">
      <div class="row">
        <button type="button" class="primary" onClick={() => navigate('/chats')}>
          New chat
        </button>
      </div>
      <input
        type="search"
        aria-label="Search chat titles"
        placeholder="Search titles"
        value={q}
        onInput={(e) => setQ(e.currentTarget.value)}
      />
      <label class="check">
        <input type="checkbox" checked={favorites} onChange={(e) => setFavorites(e.currentTarget.checked)} />
        Favorites only
      </label>
      <ErrorNote error={error} />
      {chats === null && !error && <Loading what="chats" />}
      {chats?.length === 0 && (
        <Empty>{q || favorites ? 'No chat matches.' : 'No chats yet: send a first message.'}</Empty>
      )}
      <ul class="plain">
        {chats?.map((c) => (
          <ChatItem key={c.id} chat={c} active={c.id === chatId} onChanged={() => setReload((n) => n + 1)} />
        ))}
      </ul>
      {next && (
        <button type="button" onClick={() => void load(next)}>
          More chats
        </button>
      )}
    </aside>
  );
}

export function ChatsPage({ chatId }: { chatId: string | null }) {
  const [chat, setChat] = useState<Chat | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [version, setVersion] = useState(0);

  useEffect(() => {
    setChat(null);
    setError(null);
    if (!chatId) return;
    get<Chat>(`${V1}/chats/${encodeURIComponent(chatId)}`).then(setChat, setError);
  }, [chatId]);

  const notFound = error instanceof ApiError && (error.status === 404 || error.code === 'INVALID_REQUEST');
  return (
    <main class={chatId ? 'chats has-chat' : 'chats'}>
      <ChatList chatId={chatId} version={version} />
      <section class="chat-pane" aria-label="Conversation">
        {chatId === null && (
          <>
            <h1>New chat</h1>
            <ChatView chat={null} onActivity={() => setVersion((v) => v + 1)} />
          </>
        )}
        {chatId && notFound && (
          <>
            <h1>Chat not found</h1>
            <p role="alert">This chat was not found: it does not exist, was deleted, or is not yours.</p>
            <a href="/chats" onClick={follow}>
              Back to chats
            </a>
          </>
        )}
        {chatId && error && !notFound && <ErrorNote error={error} />}
        {chatId && !chat && !error && <Loading what="the chat" />}
        {chat && (
          <>
            <h1>{chat.title}</h1>
            <ChatView key={chat.id} chat={chat} onActivity={() => setVersion((v) => v + 1)} />
          </>
        )}
      </section>
    </main>
  );
}
