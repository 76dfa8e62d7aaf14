import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';

/** Let an operator find any run, tool call or delivery in the Temporal Web UI. */
export const chatIdSearchAttribute = defineSearchAttributeKey('ChatId', SearchAttributeType.KEYWORD);
// `RunId` is reserved by Temporal (it is the execution's own run id), so ours carries a prefix.
export const runIdSearchAttribute = defineSearchAttributeKey('AgentRunId', SearchAttributeType.KEYWORD);
export const userIdSearchAttribute = defineSearchAttributeKey('UserId', SearchAttributeType.KEYWORD);
export const toolNameSearchAttribute = defineSearchAttributeKey('ToolName', SearchAttributeType.KEYWORD);
/** The run's status as its snapshot shows it: upserted by the agent workflow as it changes. */
export const runStatusSearchAttribute = defineSearchAttributeKey(
  'AgentRunStatus',
  SearchAttributeType.KEYWORD,
);
/** The route that admitted the run, or a direct tool call: `rest`, `mcp` or `console`. */
export const runViaSearchAttribute = defineSearchAttributeKey('AgentRunVia', SearchAttributeType.KEYWORD);
/**
 * The run's metadata, each pair as one `key=value` keyword (a key has no `=`), so an operator finds
 * a run by a pair: `AgentRunMetadata = 'customer=acme'`. Set at the start (see startAgentRun).
 */
export const runMetadataSearchAttribute = defineSearchAttributeKey(
  'AgentRunMetadata',
  SearchAttributeType.KEYWORD_LIST,
);
export const webhookEventSearchAttribute = defineSearchAttributeKey(
  'WebhookEvent',
  SearchAttributeType.KEYWORD,
);
export const webhookEndpointIdSearchAttribute = defineSearchAttributeKey(
  'WebhookEndpointId',
  SearchAttributeType.KEYWORD,
);

export const SEARCH_ATTRIBUTES = [
  chatIdSearchAttribute,
  runIdSearchAttribute,
  userIdSearchAttribute,
  toolNameSearchAttribute,
  runStatusSearchAttribute,
  runViaSearchAttribute,
  runMetadataSearchAttribute,
  webhookEventSearchAttribute,
  webhookEndpointIdSearchAttribute,
] as const;

/**
 * The search attributes of a run's execution, from its start, or from the continue-as-new of the
 * chat's previous run's execution into it (a queued turn): each names its own run.
 */
export function agentRunSearchAttributes(
  run: { chatId: string; runId: string; userId: string },
  via: string,
  /** Its metadata's AgentRunMetadata keywords (metadataKeywords, core/schemas/metadata.ts). */
  metadataKeywords: string[],
): SearchAttributePair[] {
  return [
    { key: chatIdSearchAttribute, value: run.chatId },
    { key: runIdSearchAttribute, value: run.runId },
    { key: userIdSearchAttribute, value: run.userId },
    { key: runStatusSearchAttribute, value: 'QUEUED' },
    { key: runViaSearchAttribute, value: via },
    ...(metadataKeywords.length ? [{ key: runMetadataSearchAttribute, value: metadataKeywords }] : []),
  ];
}
