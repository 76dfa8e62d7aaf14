import { useState } from 'preact/hooks';
import { del, post } from '../api';
import { useList } from '../resource';
import type { ApiKey } from '../types';
import { Confirm, Empty, ErrorNote, Loading, SecretOnce, Time } from '../ui';

export function KeysPage() {
  const { items: keys, error, change } = useList<ApiKey>('/api/keys');
  const [created, setCreated] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<string | null>(null);

  const create = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    void change(async () => {
      const key = await post<{ key: string }>('/api/keys', { name: String(new FormData(form).get('name')) });
      form.reset();
      setCreated(key.key);
    });
  };

  const revoke = (id: string) => void change(() => del(`/api/keys/${id}`)).then(() => setRevoking(null));

  return (
    <main class="page">
      <h1>API keys</h1>
      <p class="muted">Keys let backends and scripts call the public API as you.</p>
      <form class="row wrap" onSubmit={create}>
        <label>
          Key name
          <input name="name" required maxLength={80} />
        </label>
        <button type="submit" class="primary">
          Create key
        </button>
      </form>
      {created && <SecretOnce label="API key" value={created} onDone={() => setCreated(null)} />}
      <ErrorNote error={error} />
      {keys === null && !error && <Loading what="keys" />}
      {keys?.length === 0 && <Empty>No API keys yet.</Empty>}
      {keys && keys.length > 0 && (
        <table>
          <caption class="sr-only">Active API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td>
                  <code>{k.prefix}…</code>
                </td>
                <td>
                  <Time iso={k.createdAt} />
                </td>
                <td>
                  <Time iso={k.lastUsedAt} />
                </td>
                <td>
                  <button type="button" class="danger" onClick={() => setRevoking(k.id)}>
                    Revoke
                  </button>
                  {revoking === k.id && (
                    <Confirm
                      question={`Revoke “${k.name}”? Calls with it will fail.`}
                      yes="Yes, revoke"
                      onYes={() => revoke(k.id)}
                      onNo={() => setRevoking(null)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
