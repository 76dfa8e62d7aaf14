import type { Config } from '../config/config';
import { TOOL_NAMES } from '../tools/names';
import type { StoredRunSettings } from './store';

/**
 * The operator's settings of a run: what a run uses where neither its send nor its chat says
 * otherwise (the default model, AGENT_INSTRUCTIONS, AGENT_MAX_STEPS, every tool).
 */
export function operatorSettings(config: Config): StoredRunSettings {
  return {
    model: config.models.defaultModel ?? null,
    instructions: config.AGENT_INSTRUCTIONS,
    maxSteps: config.AGENT_MAX_STEPS,
    tools: [...TOOL_NAMES],
  };
}

/** The names of the models the operator offers, for a message that lists them. */
export function offeredNames(config: Config): string {
  const names = config.models.entries.map((e) => e.name);
  return names.length ? names.join(', ') : 'none';
}
