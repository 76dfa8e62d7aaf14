import { useState } from 'preact/hooks';
import { post } from '../api';
import { follow } from '../router';
import type { User } from '../types';
import { ErrorNote } from '../ui';

export function AuthPage({ mode, onSignedIn }: { mode: 'in' | 'up'; onSignedIn: (user: User) => void }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const action = mode === 'up' ? 'Sign up' : 'Sign in';

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const credentials = { email: String(form.get('email')), password: String(form.get('password')) };
    setBusy(true);
    setError(null);
    try {
      if (mode === 'up') await post('/api/auth/sign-up', credentials);
      const { user } = await post<{ user: User }>('/api/auth/sign-in', credentials);
      onSignedIn(user);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="auth">
      <h1>{action}</h1>
      <form onSubmit={(e) => void submit(e)}>
        <label>
          Email
          <input name="email" type="email" autoComplete="email" required />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete={mode === 'up' ? 'new-password' : 'current-password'}
            minLength={mode === 'up' ? 10 : undefined}
            required
          />
        </label>
        <ErrorNote error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {action}
        </button>
      </form>
      <p>
        {mode === 'up' ? (
          <>
            Have an account?{' '}
            <a href="/sign-in" onClick={follow}>
              Go to sign-in
            </a>
          </>
        ) : (
          <>
            New here?{' '}
            <a href="/sign-up" onClick={follow}>
              Create an account
            </a>
          </>
        )}
      </p>
    </main>
  );
}
