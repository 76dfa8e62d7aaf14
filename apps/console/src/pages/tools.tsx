import { useState } from 'preact/hooks';
import { V1, post } from '../api';
import type { ToolResult } from '../types';
import { Assets, ErrorNote, Json, credits } from '../ui';

type Fields = Record<string, FormDataEntryValue>;

const TOOLS: {
  name: string;
  title: string;
  body: (f: Fields) => unknown;
  fields: preact.ComponentChildren;
}[] = [
  {
    name: 'crop_image',
    title: 'Crop an image',
    body: (f) => ({
      image_url: f.image_url,
      x: Number(f.x),
      y: Number(f.y),
      width: Number(f.width),
      height: Number(f.height),
    }),
    fields: (
      <>
        <label>
          Image URL
          <input name="image_url" type="url" required />
        </label>
        <div class="row wrap">
          {['x', 'y', 'width', 'height'].map((n) => (
            <label key={n}>
              {n === 'x' || n === 'y'
                ? `${n.toUpperCase()} (px)`
                : `${n[0]!.toUpperCase()}${n.slice(1)} (px)`}
              <input name={n} type="number" min={n === 'x' || n === 'y' ? 0 : 1} step={1} required />
            </label>
          ))}
        </div>
      </>
    ),
  },
  {
    name: 'ai_image_2',
    title: 'Generate or edit an image',
    body: (f) => ({
      prompt: f.prompt,
      aspect_ratio: f.aspect_ratio,
      ...(f.image_url ? { image_url: f.image_url } : {}),
    }),
    fields: (
      <>
        <label>
          Prompt
          <textarea name="prompt" rows={2} maxLength={4000} required />
        </label>
        <label>
          Aspect ratio
          <select name="aspect_ratio">
            {['1:1', '16:9', '9:16', '4:3', '3:4'].map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </label>
        <label>
          Image to edit (URL, optional)
          <input name="image_url" type="url" />
        </label>
      </>
    ),
  },
  {
    name: 'merge_videos',
    title: 'Merge videos',
    body: (f) => ({
      video_urls: String(f.video_urls).split(/\s+/).filter(Boolean),
      transition: f.transition,
    }),
    fields: (
      <>
        <label>
          Video URLs (one a line)
          <textarea name="video_urls" rows={3} required />
        </label>
        <label>
          Transition
          <select name="transition">
            {['none', 'fade', 'dissolve'].map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
      </>
    ),
  },
];

function ToolForm({ tool }: { tool: (typeof TOOLS)[number] }) {
  const [result, setResult] = useState<ToolResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const run = async (event: SubmitEvent) => {
    event.preventDefault();
    const fields = Object.fromEntries(new FormData(event.currentTarget as HTMLFormElement));
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      setResult(await post<ToolResult>(`${V1}/tools/${tool.name}`, tool.body(fields)));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card" aria-labelledby={`tool-${tool.name}`}>
      <h2 id={`tool-${tool.name}`}>
        {tool.title} <code>{tool.name}</code>
      </h2>
      <form onSubmit={(e) => void run(e)}>
        {tool.fields}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Working…' : `Run ${tool.name}`}
        </button>
      </form>
      <ErrorNote error={error} />
      {result && (
        <div class="result" role="status">
          <p>
            Cost: <strong>{credits(result.creditCost)}</strong> · {result.durationMs} ms
          </p>
          <Assets assets={result.assets} />
          <Json value={result.output} label={`${tool.name} output`} />
        </div>
      )}
    </section>
  );
}

export function ToolsPage() {
  return (
    <main class="page">
      <h1>Tools</h1>
      <p class="muted">Each call blocks until the tool finishes and is charged in credits.</p>
      {TOOLS.map((t) => (
        <ToolForm key={t.name} tool={t} />
      ))}
    </main>
  );
}
