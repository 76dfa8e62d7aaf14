import { useChat } from '@ai-sdk/react';
import { useState } from 'react';
import { createRoot } from 'react-dom/client';
import { createAgentChatTransport } from '../../../clients/typescript/src/ai-sdk';

/**
 * A chat page as a team builds one on `useChat`, with the client's transport and nothing else: the
 * service's chat id in the URL (so a reload resumes the chat's run), a send, Stop and Regenerate.
 * The API key comes in the URL because this page is the test's; a real app keeps it on its server.
 */
const params = new URLSearchParams(location.search);
const apiKey = params.get('key') ?? '';
const transport = createAgentChatTransport({
  baseUrl: location.origin,
  apiKey,
  onChatCreated: (chatId) => {
    params.set('chat', chatId);
    history.replaceState(null, '', `?${params}`);
  },
});

// Read once: useChat stops (and so cancels) the run of a chat whose id changes under it.
const chatId = params.get('chat') ?? undefined;

function App() {
  const { messages, sendMessage, status, stop, regenerate, error } = useChat({
    ...(chatId ? { id: chatId } : {}),
    transport,
    resume: Boolean(chatId),
  });
  const [input, setInput] = useState('');
  return (
    <main>
      <p aria-label="status">{status}</p>
      {error ? <p role="alert">{error.message}</p> : null}
      <ol aria-label="messages">
        {messages.map((m) => (
          <li key={m.id} data-role={m.role} data-id={m.id}>
            {m.parts.map((part, i) =>
              part.type === 'text' ? (
                <span key={i}>{part.text}</span>
              ) : part.type === 'dynamic-tool' ? (
                <code key={i}>
                  {part.toolName}: {part.state}
                </code>
              ) : null,
            )}
          </li>
        ))}
      </ol>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void sendMessage({ text: input });
          setInput('');
        }}
      >
        <input aria-label="message" value={input} onChange={(e) => setInput(e.target.value)} />
        <button type="submit">Send</button>
        <button type="button" onClick={() => void stop()}>
          Stop
        </button>
        <button type="button" onClick={() => void regenerate()}>
          Regenerate
        </button>
      </form>
    </main>
  );
}

createRoot(document.getElementById('root')!).render(<App />);
