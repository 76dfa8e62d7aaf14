import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { MAX_INSTRUCTIONS, MAX_STEPS_LIMIT } from '../config/agent-limits';
import { TOOL_NAMES } from '../tools/names';
import { stored } from './common';

extendZodWithOpenApi(z);

/**
 * The agent's settings (DECISIONS, "Agent settings, usage and run control"): a send's own, a chat's
 * defaults, and what a run used. Extensions, marked so in the document.
 */
const extension = { 'x-extension': true } as const;

export const modelNameSchema = z.string().min(1).max(64).openapi({
  description: "A model of the operator's list (docs/models.md); the operator's default when left out.",
});

export const instructionsSchema = stored(z.string().max(MAX_INSTRUCTIONS)).openapi({
  description: "The run's instructions (its system prompt); the operator's when left out.",
});

export const maxStepsSchema = z.number().int().min(1).max(MAX_STEPS_LIMIT).openapi({
  description: 'The most model steps the run takes: 1 up to the operator’s cap (AGENT_MAX_STEPS).',
});

export const toolsSettingSchema = z
  .array(z.enum(TOOL_NAMES))
  .max(TOOL_NAMES.length)
  .refine((tools) => new Set(tools).size === tools.length, 'names a tool twice')
  .openapi({ description: 'The tools the model may call; `[]` for none; all three when left out.' });

/** Credits as a client gives them: a positive number, or a decimal string of at most 4 places. */
const creditsInput = z
  .union([
    z.number().positive().max(1e9),
    z.string().regex(/^\d{1,9}(\.\d{1,4})?$/, 'expected credits, e.g. 5 or 2.5'),
  ])
  .transform((v, ctx) => {
    const s = typeof v === 'number' ? String(Number(v.toFixed(4))) : v;
    if (!(Number(s) > 0)) {
      ctx.addIssue({ code: 'custom', message: 'must be more than 0' });
      return z.NEVER;
    }
    return s;
  });

export const budgetSchema = z
  .object({
    maxCredits: creditsInput.optional().openapi({
      description:
        'The most credits the run may spend, model steps and tools together; the run ends FAILED with BUDGET_EXCEEDED before a step or a tool call that could pass it.',
    }),
    maxToolCalls: z.number().int().min(0).max(1_000).optional().openapi({
      description: 'The most tool calls the run may make; past it the run ends FAILED with BUDGET_EXCEEDED.',
    }),
  })
  .strict()
  .openapi('RunBudget', { ...extension, example: { maxCredits: '5', maxToolCalls: 2 } });
export type BudgetInput = z.output<typeof budgetSchema>;

/** A send's own settings (each optional; the chat's default, then the operator's, stand in). */
export const sendSettingsShape = {
  model: modelNameSchema.optional().openapi(extension),
  instructions: instructionsSchema.optional().openapi(extension),
  maxSteps: maxStepsSchema.optional().openapi(extension),
  tools: toolsSettingSchema.optional().openapi(extension),
  budget: budgetSchema.optional(),
};

/** A chat's defaults as PATCH changes them: a value sets the default, null clears it. */
export const chatSettingsPatchShape = {
  model: modelNameSchema.nullable().optional().openapi(extension),
  instructions: instructionsSchema.nullable().optional().openapi(extension),
  maxSteps: maxStepsSchema.nullable().optional().openapi(extension),
  tools: toolsSettingSchema.nullable().optional().openapi(extension),
};

/** A chat's defaults as it holds them: only those set. */
export const chatSettingsSchema = z
  .object({
    model: z.string().optional(),
    instructions: z.string().optional(),
    maxSteps: z.number().int().optional(),
    tools: z.array(z.enum(TOOL_NAMES)).optional(),
  })
  .openapi('ChatSettings', {
    ...extension,
    description: "The chat's defaults for its runs' settings; a send's own win. Only those set are shown.",
    example: { model: 'claude', maxSteps: 4 },
  });
export type ChatSettings = z.output<typeof chatSettingsSchema>;

/** What a run used, resolved: its send's, else its chat's, else the operator's. */
export const runSettingsSchema = z
  .object({
    model: z.string().nullable().openapi({ description: 'Null when the operator offers no model.' }),
    instructions: z.string(),
    maxSteps: z.number().int(),
    tools: z.array(z.enum(TOOL_NAMES)),
    budget: z
      .object({ maxCredits: z.string().nullable(), maxToolCalls: z.number().int().nullable() })
      .nullable()
      .openapi({ description: "The send's budget; null when it gave none." }),
  })
  .openapi('RunSettings', {
    ...extension,
    description: 'What the run used: its send’s settings, else its chat’s defaults, else the operator’s.',
  });
export type RunSettings = z.output<typeof runSettingsSchema>;

const usageFields = {
  inputTokens: z
    .number()
    .int()
    .openapi({ description: 'Input tokens, as the providers counted them; cached included.' }),
  outputTokens: z.number().int(),
  cachedInputTokens: z
    .number()
    .int()
    .openapi({ description: 'Input tokens read from the provider’s cache.' }),
  credits: z.string().openapi({ description: 'Credits charged, a decimal string.' }),
  compacted: z.boolean().openapi({ description: 'Whether a summary of the chat’s older turns was written.' }),
};

/** A run's usage, in its snapshot and in `agent.completed` and `agent.failed`. */
export const runUsageSchema = z
  .object({
    ...usageFields,
    steps: z.number().int().openapi({ description: 'Model steps the run took.' }),
    credits: z
      .string()
      .openapi({ description: 'Credits charged: model steps and tools together, a decimal string.' }),
  })
  .openapi('RunUsage', extension);
export type RunUsage = z.output<typeof runUsageSchema>;

/** A model step's usage, in the snapshot (`stepUsage`). */
export const stepUsageSchema = z
  .object({ step: z.number().int(), model: z.string().nullable(), ...usageFields })
  .openapi('StepUsage', extension);
export type StepUsage = z.output<typeof stepUsageSchema>;

export const EMPTY_USAGE: RunUsage = {
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  steps: 0,
  credits: '0',
  compacted: false,
};
