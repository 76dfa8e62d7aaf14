import type { OAuthScope } from '../../core/auth/scopes';
import { toolNamed } from './tools';

/** Reading chats and runs as resources needs `read`; discovery (initialize, lists of tools) nothing. */
const METHOD_SCOPES: Record<string, OAuthScope> = {
  'resources/list': 'read',
  'resources/read': 'read',
  'resources/subscribe': 'read',
};

/**
 * The scopes the JSON-RPC message of a POST needs: a tools/call its tool's, the resource methods
 * `read`. Unknown tools and malformed messages need none here: the server answers them with their
 * own error.
 */
export function scopesNeeded(body: unknown): OAuthScope[] {
  const message = body as { method?: unknown; params?: { name?: unknown } } | null;
  if (typeof message?.method !== 'string') return [];
  if (message.method === 'tools/call') {
    const tool = toolNamed(message.params?.name);
    return tool ? [tool.scope] : [];
  }
  return Object.hasOwn(METHOD_SCOPES, message.method) ? [METHOD_SCOPES[message.method]!] : [];
}
