import { z } from 'zod';
import type { Config } from '../config/config';
import { AppError, NotFoundError, ValidationError, type ErrorDetail } from '../errors/app-error';
import type { ModelToolSpec } from '../model/types';
import { RECTANGLE_FIELDS } from './rectangle';
import { aiImageInputSchema, cropImageInputSchema, mergeVideosInputSchema, RECTANGLE_ISSUE } from './schemas';

import { TOOL_NAMES, type ToolName } from './names';

export { TOOL_NAMES, type ToolName };

/** The provider a tool runs on under this config; 'none' answers 503 PROVIDER_NOT_CONFIGURED. */
export type ProviderName = 'sharp' | 'ffmpeg' | Config['IMAGE_PROVIDER'];

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: ToolName;
  description: string;
  input: S;
  provider(config: Config): ProviderName;
  /** Credits one successful call costs, a decimal string from config. */
  price(config: Config): string;
}

const define = <S extends z.ZodType>(d: ToolDefinition<S>) => d;

export const TOOLS = {
  crop_image: define({
    name: 'crop_image',
    description:
      'Crops an image (by URL or an uploaded attachment) to a rectangle given in pixels (x, y, width, height), ' +
      'in percent of the image (x_percent, y_percent, width_percent, height_percent), or as crop: {x, y, width, height}. ' +
      'Exactly one form; a rectangle reaching past the image is refused, never clamped. Keeps the PNG, JPEG or ' +
      'WebP format, every frame of an animated WebP or GIF, and the 16 bits of a 16-bit PNG.',
    input: cropImageInputSchema,
    provider: () => 'sharp',
    price: (config) => config.PRICE_CROP_IMAGE,
  }),
  ai_image_2: define({
    name: 'ai_image_2',
    description:
      'Generates an image from a prompt, or edits the image at image_url following the prompt. ' +
      'aspect_ratio is one of 1:1, 16:9, 9:16, 4:3, 3:4.',
    input: aiImageInputSchema,
    provider: (config) => config.IMAGE_PROVIDER,
    price: (config) => config.PRICE_AI_IMAGE_2,
  }),
  merge_videos: define({
    name: 'merge_videos',
    description:
      'Joins 2–10 videos (by URL) into one MP4, in order, with no transition or a fade or dissolve ' +
      'of transition_duration seconds between them. The output has the first video’s shape as it is ' +
      'displayed (rotation and pixel aspect ratio applied); each other video fits inside it on black bars.',
    input: mergeVideosInputSchema,
    provider: () => 'ffmpeg',
    price: (config) => config.PRICE_MERGE_VIDEOS,
  }),
} as const satisfies Record<ToolName, ToolDefinition>;

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

export function toolDefinition(name: string): (typeof TOOLS)[ToolName] {
  if (!isToolName(name)) throw new NotFoundError('UNKNOWN_TOOL', `There is no tool named ${name}.`);
  return TOOLS[name];
}

/**
 * Validates a tool's input by its schema: 400 INVALID_RECTANGLE when the crop rectangle is the
 * problem (its forms, or any rectangle field's value), else 400 INVALID_REQUEST; each issue is
 * listed in `details`.
 */
export function parseToolInput<N extends ToolName>(
  name: N,
  raw: unknown,
): z.output<(typeof TOOLS)[N]['input']> {
  const result = TOOLS[name].input.safeParse(raw ?? {});
  if (result.success) return result.data as z.output<(typeof TOOLS)[N]['input']>;
  const details: ErrorDetail[] = result.error.issues.map((issue) => ({
    path: ['body', ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
  const rectangle = result.error.issues.some(
    (issue) =>
      (issue.code === 'custom' && issue.params?.rectangle === RECTANGLE_ISSUE.rectangle) ||
      (name === 'crop_image' && RECTANGLE_FIELDS.includes(String(issue.path[0]))),
  );
  if (rectangle) throw new AppError('INVALID_RECTANGLE', 'The crop rectangle is invalid.', details);
  throw new ValidationError(details);
}

/** The three tools as the model sees them: name, description and the JSON Schema of the input. */
export function modelToolSpecs(): ModelToolSpec[] {
  return TOOL_NAMES.map((name) => ({
    name,
    description: TOOLS[name].description,
    parameters: z.toJSONSchema(TOOLS[name].input, { io: 'input', unrepresentable: 'any' }) as Record<
      string,
      unknown
    >,
  }));
}
