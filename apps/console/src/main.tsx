import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, post, whenSignedOut } from './api';
import { AuthPage } from './pages/auth';
import { ChatsPage } from './pages/chats';
import { KeysPage } from './pages/keys';
import { ToolsPage } from './pages/tools';
import { WebhooksPage } from './pages/webhooks';
import { follow, navigate, usePath } from './router';
import type { User } from './types';
import { ErrorNote, Loading, focusHeading } from './ui';
import './styles.css';

const NAV = [
  ['/chats', 'Chats'],
  ['/tools', 'Tools'],
  ['/keys', 'API keys'],
  ['/webhooks', 'Webhooks'],
] as const;

function Page({ path }: { path: string }) {
  const chat = /^\/chats\/([^/]+)$/.exec(path);
  if (chat) return <ChatsPage chatId={decodeURIComponent(chat[1] ?? '')} />;
  if (path === '/keys') return <KeysPage />;
  if (path === '/webhooks') return <WebhooksPage />;
  if (path === '/tools') return <ToolsPage />;
  return <ChatsPage chatId={null} />;
}

function App() {
  const path = usePath();
  const [user, setUser] = useState<User | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    whenSignedOut(() => setUser(null));
    // The console's own question (200, user or null): a visitor not signed in is no error.
    get<{ user: User | null }>('/console/api/session').then(({ user }) => setUser(user), setError);
  }, []);

  // Signing in or out replaces the whole page, and what had the focus with it.
  const signedIn = useRef<boolean | undefined>(undefined);
  useEffect(() => {
    const now = user === undefined ? undefined : user !== null;
    if (signedIn.current !== undefined && now !== signedIn.current) focusHeading();
    signedIn.current = now;
  }, [user]);

  useEffect(() => {
    const heading = document.querySelector('h1');
    document.title = `${heading?.textContent ?? 'Console'} · Agent chat console`;
  });

  if (error)
    return (
      <main>
        <ErrorNote error={error} />
      </main>
    );
  if (user === undefined)
    return (
      <main>
        <Loading what="the console" />
      </main>
    );
  if (user === null)
    return (
      <AuthPage
        mode={path === '/sign-up' ? 'up' : 'in'}
        onSignedIn={(u) => {
          setUser(u);
          if (path === '/' || path === '/sign-in' || path === '/sign-up') navigate('/chats', true);
        }}
      />
    );

  const signOut = async () => {
    try {
      await post('/api/auth/sign-out');
    } finally {
      setUser(null);
      navigate('/sign-in');
    }
  };
  const current = (href: string) => path === href || path.startsWith(href + '/');
  return (
    <>
      <header class="top">
        <a class="brand" href="/chats" onClick={follow}>
          Agent chat
        </a>
        <nav aria-label="Console">
          {NAV.map(([href, label]) => (
            <a key={href} href={href} onClick={follow} aria-current={current(href) ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span class="who muted">{user.email}</span>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <Page path={path} />
    </>
  );
}

const root = document.getElementById('app') as HTMLElement;
// The page's own "Loading…" stands until the script runs; render adds to, not replaces, what is there.
root.textContent = '';
render(<App />, root);
