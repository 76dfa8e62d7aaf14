import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Let an operator find any run or tool call in the Temporal Web UI. */
export const chatIdSearchAttribute = defineSearchAttributeKey('ChatId', SearchAttributeType.KEYWORD);
// `RunId` is reserved by Temporal (it is the execution's own run id), so ours carries a prefix.
export const runIdSearchAttribute = defineSearchAttributeKey('AgentRunId', SearchAttributeType.KEYWORD);
export const userIdSearchAttribute = defineSearchAttributeKey('UserId', SearchAttributeType.KEYWORD);
export const toolNameSearchAttribute = defineSearchAttributeKey('ToolName', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [
  chatIdSearchAttribute,
  runIdSearchAttribute,
  userIdSearchAttribute,
  toolNameSearchAttribute,
] as const;
