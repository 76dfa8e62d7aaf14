import type { ComponentChildren, RefObject } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
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

/**
 * A file input that looks like the console's other buttons, with what was chosen beside it in
 * full words: the browser's own control reads "Choose Files", and its "No file chosen" was cut
 * short in a narrow row. The real input stays in the page, out of sight: the keyboard and a screen
 * reader reach it, its focus ring shows on the button, and the button is its label, so a click or
 * a tap on it opens the browser's file chooser.
 */
export function FilePicker({
  label,
  files,
  onChange,
  name,
  accept,
  multiple,
}: {
  label: string;
  files: File[];
  onChange: (files: File[]) => void;
  name: string;
  accept?: string;
  multiple?: boolean;
}) {
  const chosen =
    files.length === 0
      ? multiple
        ? 'No files chosen'
        : 'No file chosen'
      : files.length === 1
        ? (files[0]?.name ?? '')
        : `${files.length} files: ${files.map((f) => f.name).join(', ')}`;
  const id = `file-picker-${name}`;
  return (
    <span class="file-picker">
      <input
        id={id}
        type="file"
        name={name}
        accept={accept}
        multiple={multiple}
        onChange={(e) => onChange([...(e.currentTarget.files ?? [])])}
      />
      <label for={id} class="button">
        {label}
      </label>
      <span class="muted chosen" title={chosen}>
        {chosen}
      </span>
    </span>
  );
}

/** A moment in a list: the time when it is today, else the day; the full date and time on hover. */
export function ShortTime({ iso }: { iso: string }) {
  const at = new Date(iso);
  const today = at.toDateString() === new Date().toDateString();
  return (
    <time class="muted small grow" dateTime={iso} title={at.toLocaleString()}>
      {today
        ? at.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
        : at.toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' })}
    </time>
  );
}

/** A tool's price as the API states it (a decimal string): "1 credit", "10 credits", "0.5 credits". */
export const credits = (cost: string) => `${cost} credit${Number(cost) === 1 ? '' : 's'}`;

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

/**
 * Focus for when what had it is gone (a page replaced, a row removed): the page's heading, so the
 * next Tab goes on from the top of the page's content instead of the top of the document.
 */
export function focusHeading(): void {
  const heading = document.querySelector<HTMLElement>('main h1');
  if (!heading) return;
  heading.tabIndex = -1;
  heading.focus();
}

/**
 * When the element behind `ref` goes away while it has the focus (Cancel run, at the run's end),
 * `to` takes the focus once the render is done, instead of the document.
 */
export function useFocusAfterGoing(ref: RefObject<HTMLElement | null>, to: () => HTMLElement | null): void {
  useLayoutEffect(
    () => () => {
      // Run on unmount, before the element leaves the document.
      if (ref.current && document.activeElement === ref.current) queueMicrotask(() => to()?.focus());
    },
    [],
  );
}

const FOCUSABLE =
  'a[href], button:not(:disabled), input:not(:disabled), textarea:not(:disabled), select:not(:disabled), [tabindex]:not([tabindex="-1"])';

/**
 * A modal dialog: the page behind it is inert, Tab and Shift+Tab go round inside it, Escape
 * closes it, and focus goes back to where it was, or to the page's heading when that is gone (a
 * revoked key's row).
 */
function Dialog({
  label,
  alert,
  onClose,
  children,
}: {
  label: string;
  alert?: boolean;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useLayoutEffect(() => {
    const dialog = ref.current;
    const before = document.activeElement;
    dialog?.showModal();
    return () => {
      dialog?.close();
      // Once the render that closed it is done: it may have taken `before` away too (a revoked key's row).
      queueMicrotask(() => {
        if (before instanceof HTMLElement && before !== document.body && before.isConnected) before.focus();
        else focusHeading();
      });
    };
  }, []);
  const keepTabInside = (event: KeyboardEvent) => {
    if (event.key !== 'Tab' || !ref.current) return;
    const inside = [...ref.current.querySelectorAll<HTMLElement>(FOCUSABLE)];
    const [first, last] = [inside[0], inside[inside.length - 1]];
    const at = document.activeElement;
    if (event.shiftKey && (at === first || at === ref.current)) {
      event.preventDefault();
      last?.focus();
    } else if (!event.shiftKey && at === last) {
      event.preventDefault();
      first?.focus();
    }
  };
  return (
    <dialog
      ref={ref}
      class="dialog"
      role={alert ? 'alertdialog' : undefined}
      aria-label={label}
      onKeyDown={keepTabInside}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      {children}
    </dialog>
  );
}

/** "Signing secret" in a sentence is "signing secret", and "API key" stays "API key". */
const inSentence = (label: string) =>
  /^.[a-z]/.test(label) ? label[0]?.toLowerCase() + label.slice(1) : label;

/** A secret the API shows in this one answer: copy it now, it will not be shown again. */
export function SecretOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const noun = inSentence(label);
  return (
    <Dialog label={`New ${noun}`} onClose={onDone}>
      <section class="secret">
        <p class="warning" role="alert">
          Copy this {noun} now. It will not be shown again.
        </p>
        <input
          ref={input}
          readOnly
          value={value}
          aria-label={label}
          onFocus={(e) => e.currentTarget.select()}
        />
        <div class="row">
          <button
            type="button"
            class="primary"
            autoFocus
            onClick={() => void copy(value, input.current).then(() => setCopied(true))}
          >
            {copied ? 'Copied' : 'Copy'}
          </button>
          <button type="button" onClick={onDone}>
            Done
          </button>
        </div>
        <p class="muted" role="status">
          {copied ? `The ${noun} is on the clipboard.` : ''}
        </p>
      </section>
    </Dialog>
  );
}

/** A second step before something that cannot be undone; the safe answer has the focus. */
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
    <Dialog label={question} alert onClose={onNo}>
      <p>{question}</p>
      <div class="row">
        <button type="button" class="danger" onClick={onYes}>
          {yes}
        </button>
        <button type="button" autoFocus onClick={onNo}>
          Keep
        </button>
      </div>
    </Dialog>
  );
}
