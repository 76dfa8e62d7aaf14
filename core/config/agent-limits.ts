/** The highest AGENT_MAX_STEPS may be set: the cap a send's `maxSteps` is checked against statically. */
export const MAX_STEPS_LIMIT = 100;
/** The longest instructions (system prompt) a send, a chat or AGENT_INSTRUCTIONS may give (DECISIONS). */
export const MAX_INSTRUCTIONS = 8_192;
