import { useState } from 'preact/hooks';
import { del, post } from '../api';
import { useList } from '../resource';
import { limits } from '../limits';
import type { Attempt, Delivery, Endpoint } from '../types';
import { Confirm, Empty, ErrorNote, Loading, SecretOnce, Time } from '../ui';

/** What the attempt's signature covers, for a receiver checking its own verification. */
function SignedContent({ attempt }: { attempt: Attempt }) {
  if (!attempt.signedContent) return <span class="muted">—</span>;
  return (
    <details>
      <summary>Show</summary>
      <pre class="json">{attempt.signedContent}</pre>
    </details>
  );
}

function Deliveries({ endpoint }: { endpoint: Endpoint }) {
  const {
    items: deliveries,
    error,
    load,
    change,
  } = useList<Delivery>(`/api/webhook-endpoints/${endpoint.id}/deliveries`);
  const redeliver = (id: string) => void change(() => post(`/api/webhook-deliveries/${id}/redeliver`));

  return (
    <section class="deliveries" aria-label={`Deliveries to ${endpoint.url}`}>
      <div class="row">
        <h3 class="grow">Deliveries</h3>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <ErrorNote error={error} />
      {deliveries === null && !error && <Loading what="deliveries" />}
      {deliveries?.length === 0 && <Empty>No deliveries yet.</Empty>}
      <ul class="plain">
        {deliveries?.map((d) => (
          <li key={d.id} class="delivery">
            <div class="row wrap">
              <code>{d.event}</code>
              <span class={`status status-${d.status.toLowerCase()}`}>{d.status}</span>
              <Time iso={d.createdAt} />
              <span class="grow" />
              {d.status !== 'PENDING' && (
                <button type="button" onClick={() => redeliver(d.id)}>
                  Redeliver
                </button>
              )}
            </div>
            <div class="scroll">
              <table>
                <caption class="sr-only">Attempts of {d.event}</caption>
                <thead>
                  <tr>
                    <th scope="col">Attempt</th>
                    <th scope="col">Response</th>
                    <th scope="col">Time</th>
                    <th scope="col">Took</th>
                    <th scope="col">Signed string</th>
                  </tr>
                </thead>
                <tbody>
                  {d.attempts.map((a) => (
                    <tr key={`${a.series}-${a.attempt}`}>
                      <td>
                        {a.series > 1 ? `${a.series}.` : ''}
                        {a.attempt}
                      </td>
                      <td>{a.statusCode ?? a.error ?? '—'}</td>
                      <td>
                        <Time iso={a.startedAt} />
                      </td>
                      <td>{a.durationMs} ms</td>
                      <td>
                        <SignedContent attempt={a} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function WebhooksPage() {
  const { items: endpoints, error, change } = useList<Endpoint>('/api/webhook-endpoints');
  const [secret, setSecret] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);

  const create = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    void change(async () => {
      const created = await post<{ secret: string }>('/api/webhook-endpoints', {
        url: String(data.get('url')),
        events: data.getAll('events').map(String),
      });
      form.reset();
      setSecret(created.secret);
    });
  };

  const remove = (id: string) =>
    void change(() => del(`/api/webhook-endpoints/${id}`)).then(() => setDeleting(null));

  return (
    <main class="page">
      <h1>Webhooks</h1>
      <form onSubmit={create}>
        <label>
          Endpoint URL
          <input name="url" type="url" required placeholder="https://example.com/hooks" />
        </label>
        <fieldset>
          <legend>Events</legend>
          {limits.webhookEvents.map((name) => (
            <label class="check" key={name}>
              <input type="checkbox" name="events" value={name} defaultChecked />
              {name}
            </label>
          ))}
        </fieldset>
        <button type="submit" class="primary">
          Add endpoint
        </button>
      </form>
      {secret && <SecretOnce label="Signing secret" value={secret} onDone={() => setSecret(null)} />}
      <ErrorNote error={error} />
      {endpoints === null && !error && <Loading what="endpoints" />}
      {endpoints?.length === 0 && <Empty>No webhook endpoints yet.</Empty>}
      <ul class="plain">
        {endpoints?.map((ep) => (
          <li key={ep.id} class="endpoint">
            <div class="row wrap">
              <code class="grow">{ep.url}</code>
              <span class="muted">{ep.events.join(', ')}</span>
              <button
                type="button"
                aria-expanded={open === ep.id}
                onClick={() => setOpen(open === ep.id ? null : ep.id)}
              >
                Deliveries
              </button>
              <button type="button" class="danger" onClick={() => setDeleting(ep.id)}>
                Delete
              </button>
            </div>
            {deleting === ep.id && (
              <Confirm
                question={`Delete the endpoint ${ep.url}?`}
                yes="Yes, delete"
                onYes={() => remove(ep.id)}
                onNo={() => setDeleting(null)}
              />
            )}
            {open === ep.id && <Deliveries endpoint={ep} />}
          </li>
        ))}
      </ul>
    </main>
  );
}
