import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { messageOf } from './api';
import type { ToolAsset } from './types';

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** An error in the words of the API's envelope. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {messageOf(error)}
    </p>
  );
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">never</span>;
  return <time dateTime={iso}>{new Date(iso).toLocaleString()}</time>;
}

export function Json({ value, label }: { value: unknown; label: string }) {
  return (
    <pre class="json" aria-label={label} tabIndex={0}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

export function Media({ url, mimeType, name }: { url: string; mimeType: string; name: string }) {
  if (mimeType.startsWith('image/')) return <img class="media" src={url} alt={name} loading="lazy" />;
  if (mimeType.startsWith('video/'))
    return <video class="media" src={url} controls preload="metadata" aria-label={name} />;
  if (mimeType.startsWith('audio/')) return <audio src={url} controls preload="metadata" aria-label={name} />;
  return <a href={url}>{name}</a>;
}

export function Assets({ assets }: { assets: ToolAsset[] }) {
  if (!assets.length) return null;
  return (
    <ul class="assets">
      {assets.map((a) => (
        <li key={a.url}>
          <Media url={a.url} mimeType={a.mimeType} name={a.filename ?? a.mimeType} />
        </li>
      ))}
    </ul>
  );
}

async function copy(text: string, input: HTMLInputElement | null): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // The clipboard API needs a secure context; select the text so the person can copy it.
    input?.select();
    document.execCommand('copy');
  }
}

/** A secret the API shows in this one answer: copy it now, it will not be shown again. */
export function SecretOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  return (
    <section class="secret" aria-label={label}>
      <p class="warning" role="alert">
        Copy this {label.toLowerCase()} now. It will not be shown again.
      </p>
      <div class="row">
        <input
          ref={input}
          readOnly
          value={value}
          aria-label={label}
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={() => void copy(value, input.current).then(() => setCopied(true))}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </section>
  );
}

/** A second step before something that cannot be undone. */
export function Confirm({
  question,
  yes,
  onYes,
  onNo,
}: {
  question: string;
  yes: string;
  onYes: () => void;
  onNo: () => void;
}) {
  return (
    <div class="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button type="button" class="danger" onClick={onYes} ref={(el) => el?.focus()}>
        {yes}
      </button>
      <button type="button" onClick={onNo}>
        Keep
      </button>
    </div>
  );
}
