import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { del, post } from '../api';
import { useList } from '../resource';
import type { ApiKey, OAuthGrant } from '../types';
import { Confirm, Empty, ErrorNote, Loading, SecretOnce, Time } from '../ui';

export function KeysPage() {
  const keys = useList<ApiKey>('/api/keys');
  const grants = useList<OAuthGrant>('/api/oauth-grants');
  const [created, setCreated] = useState<string | null>(null);

  const create = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    void keys.change(async () => {
      const key = await post<{ key: string }>('/api/keys', { name: String(new FormData(form).get('name')) });
      form.reset();
      setCreated(key.key);
    });
  };

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
      <RevocableTable
        list={keys}
        what="keys"
        caption="Active API keys"
        empty="No API keys yet."
        columns={[
          { header: 'Name', cell: (k) => k.name },
          { header: 'Key', cell: (k) => <code>{k.prefix}…</code> },
          { header: 'Created', cell: (k) => <Time iso={k.createdAt} />, wideOnly: true },
          { header: 'Last used', cell: (k) => <Time iso={k.lastUsedAt} /> },
        ]}
        revokeUrl={(k) => `/api/keys/${k.id}`}
        question={(k) => `Revoke “${k.name}”? Calls with it will fail.`}
      />
      {/* Assistants connected by OAuth sign-in (MCP): the other way in as this user, beside the keys. */}
      <section aria-labelledby="grants-heading">
        <h2 id="grants-heading">Connected assistants</h2>
        <p class="muted">Assistants you allowed to act as you over MCP by signing in.</p>
        <RevocableTable
          list={grants}
          what="connected assistants"
          caption="Connected assistants"
          empty="No assistant is connected."
          columns={[
            { header: 'Assistant', cell: (g) => g.clientName },
            { header: 'Connected', cell: (g) => <Time iso={g.createdAt} />, wideOnly: true },
            { header: 'Last used', cell: (g) => <Time iso={g.lastUsedAt} /> },
          ]}
          revokeUrl={(g) => `/api/oauth-grants/${g.id}`}
          question={(g) => `Revoke “${g.clientName}”? It stops working until you allow it again.`}
          label={(g) => `Revoke ${g.clientName}`}
        />
      </section>
    </main>
  );
}

interface Column<T> {
  header: string;
  cell: (item: T) => ComponentChildren;
  /** Left out where the table would not fit a phone. */
  wideOnly?: boolean;
}

/** A list of credentials, each revoked after a confirmation. */
function RevocableTable<T extends { id: string }>({
  list,
  what,
  caption,
  empty,
  columns,
  revokeUrl,
  question,
  label,
}: {
  list: ReturnType<typeof useList<T>>;
  what: string;
  caption: string;
  empty: string;
  columns: Column<T>[];
  revokeUrl: (item: T) => string;
  question: (item: T) => string;
  /** The Revoke button's name, where "Revoke" alone would not say which. */
  label?: (item: T) => string;
}) {
  const { items, error, change } = list;
  const [revoking, setRevoking] = useState<string | null>(null);
  const revoke = (item: T) => void change(() => del(revokeUrl(item))).then(() => setRevoking(null));
  const wide = (column: Column<T>) => (column.wideOnly ? 'wide-only' : undefined);

  return (
    <>
      <ErrorNote error={error} />
      {items === null && !error && <Loading what={what} />}
      {items?.length === 0 && <Empty>{empty}</Empty>}
      {items && items.length > 0 && (
        <table>
          <caption class="sr-only">{caption}</caption>
          <thead>
            <tr>
              {columns.map((column) => (
                <th scope="col" key={column.header} class={wide(column)}>
                  {column.header}
                </th>
              ))}
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((item) => (
              <tr key={item.id}>
                {columns.map((column) => (
                  <td key={column.header} class={wide(column)}>
                    {column.cell(item)}
                  </td>
                ))}
                <td>
                  <button
                    type="button"
                    class="danger"
                    aria-label={label?.(item)}
                    onClick={() => setRevoking(item.id)}
                  >
                    Revoke
                  </button>
                  {revoking === item.id && (
                    <Confirm
                      question={question(item)}
                      yes="Yes, revoke"
                      onYes={() => revoke(item)}
                      onNo={() => setRevoking(null)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
