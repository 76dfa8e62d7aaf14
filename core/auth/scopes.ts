/**
 * The OAuth scopes an MCP client can be granted. `read` lists and reads chats, messages and runs;
 * `write` sends, decides plans, cancels runs and calls the media tools (which spend credits). API
 * keys and sessions are not scoped: they act with every scope.
 */
export const OAUTH_SCOPES = ['read', 'write'] as const;
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

/** What the consent page says each scope allows. */
export const SCOPE_DESCRIPTIONS: Record<OAuthScope, string> = {
  read: 'read your chats, messages and runs',
  write: 'send messages, approve or reject plans, cancel runs and run media tools with your credits',
};

export function isOAuthScope(scope: string): scope is OAuthScope {
  return (OAUTH_SCOPES as readonly string[]).includes(scope);
}
