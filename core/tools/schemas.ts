import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { exampleAiImageInput, exampleCropInput, exampleMergeVideosInput } from '../schemas/examples';
import { stored } from '../schemas/common';
import { RECTANGLE_FORMS, rectangleShapeProblems } from './rectangle';

extendZodWithOpenApi(z);

/** A remote input: http(s) only; the SSRF guard decides the rest when it is fetched. */
const httpUrl = stored(z.url({ protocol: /^https?$/, message: 'expected an http(s) URL' }).max(2048));

/** Marks an issue as a rectangle problem: answered 400 INVALID_RECTANGLE, not INVALID_REQUEST. */
export const RECTANGLE_ISSUE = { rectangle: true } as const;

/** Bounds stated so the document states them too; no image this service accepts is wider. */
const MAX_PIXEL = 100_000;
const pixel = z.number().int().min(0).max(MAX_PIXEL);
const pixelSize = z.number().int().min(1).max(MAX_PIXEL);
const percent = z.number().min(0).max(100);
const percentSize = z.number().gt(0).max(100);

export const cropImageInputSchema = z
  .object({
    image_url: httpUrl.optional().describe('The image to crop (http or https). Give this or attachmentId.'),
    attachmentId: z.uuid().optional().describe('An uploaded image of yours. Give this or image_url.'),
    x: pixel.optional().describe('Pixel form: left edge.'),
    y: pixel.optional().describe('Pixel form: top edge.'),
    width: pixelSize.optional().describe('Pixel form: width.'),
    height: pixelSize.optional().describe('Pixel form: height.'),
    x_percent: percent.optional().describe('Percent form: left edge, 0–100 of the image width.'),
    y_percent: percent.optional().describe('Percent form: top edge, 0–100 of the image height.'),
    width_percent: percentSize
      .optional()
      .describe('Percent form: width, more than 0 and at most 100 - x_percent of the image width.'),
    height_percent: percentSize
      .optional()
      .describe('Percent form: height, more than 0 and at most 100 - y_percent of the image height.'),
    crop: z
      .object({ x: pixel, y: pixel, width: pixelSize, height: pixelSize })
      .optional()
      .describe('Object form: the rectangle in pixels.'),
  })
  .superRefine((v, ctx) => {
    if ((v.image_url === undefined) === (v.attachmentId === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['image_url'],
        message: 'give exactly one of image_url and attachmentId',
      });
    }
    for (const message of rectangleShapeProblems(v)) {
      ctx.addIssue({ code: 'custom', path: [], params: RECTANGLE_ISSUE, message });
    }
  })
  // The refinement in the document's terms: one source, and one complete rectangle form.
  .openapi('CropImageInput', {
    example: exampleCropInput,
    allOf: [
      { oneOf: [{ required: ['image_url'] }, { required: ['attachmentId'] }] },
      {
        oneOf: RECTANGLE_FORMS.map((form) => ({
          required: [...form],
          not: {
            anyOf: RECTANGLE_FORMS.flat()
              .filter((f) => !form.includes(f))
              .map((f) => ({ required: [f] })),
          },
        })),
      },
    ],
  });

export const ASPECT_RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4'] as const;

export const aiImageInputSchema = z
  .object({
    prompt: stored(z.string().min(1).max(4000)).describe('What to draw, or how to change the image.'),
    image_url: httpUrl
      .optional()
      .describe('An image to edit (http or https); without it a new image is made.'),
    aspect_ratio: z.enum(ASPECT_RATIOS).default('1:1').describe('The output shape.'),
    seed: z
      .number()
      .int()
      .min(0)
      .max(4_294_967_295)
      .optional()
      .describe('Makes the result repeatable where the provider supports it.'),
  })
  .openapi('AiImage2Input', { example: exampleAiImageInput });

export const MERGE_TRANSITIONS = ['none', 'fade', 'dissolve'] as const;

export const mergeVideosInputSchema = z
  .object({
    video_urls: z
      .array(httpUrl)
      .min(2)
      .max(10)
      .describe('The videos to join, in order (http or https), 2–10.'),
    transition: z.enum(MERGE_TRANSITIONS).default('none').describe('How one video passes into the next.'),
    transition_duration: z
      .number()
      .min(0.2)
      .max(3)
      .default(1)
      .describe('Seconds each transition lasts (fade and dissolve only).'),
  })
  .openapi('MergeVideosInput', { example: exampleMergeVideosInput });

export type CropImageInput = z.output<typeof cropImageInputSchema>;
export type AiImageInput = z.output<typeof aiImageInputSchema>;
export type MergeVideosInput = z.output<typeof mergeVideosInputSchema>;
