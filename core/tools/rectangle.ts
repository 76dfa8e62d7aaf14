import { permanentFailure } from '../errors/failures';

/**
 * The crop rectangle, in its three forms, and the one rule that judges it. Whatever is wrong with
 * a rectangle (missing, partial, given twice, not whole pixels, empty, negative, reaching past
 * the image) answers 400 INVALID_RECTANGLE. What can be judged without the image (everything but
 * pixel edges) is judged by the input schema, before any work; the pixel edges once the image's
 * upright size is known. Nothing is ever clamped: a rectangle past the image is refused.
 */

export const PIXEL_FIELDS = ['x', 'y', 'width', 'height'] as const;
export const PERCENT_FIELDS = ['x_percent', 'y_percent', 'width_percent', 'height_percent'] as const;
/** Every input field that describes the rectangle: an issue with any of them is a rectangle issue. */
export const RECTANGLE_FIELDS: readonly string[] = [...PIXEL_FIELDS, ...PERCENT_FIELDS, 'crop'];
export const RECTANGLE_FORMS: readonly (readonly string[])[] = [PIXEL_FIELDS, PERCENT_FIELDS, ['crop']];

/** Sums of percentages such as 33.3 + 66.7 land a rounding error past 100; this much is let pass. */
const PERCENT_TOLERANCE = 1e-9;

export interface RectangleInput {
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  x_percent?: number;
  y_percent?: number;
  width_percent?: number;
  height_percent?: number;
  crop?: { x: number; y: number; width: number; height: number };
}

export interface Rectangle {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * What is wrong with a rectangle before the image is known, as messages: how many forms are
 * given, whether the one given is complete, and whether a percent rectangle fits in 100 percent.
 * Each field's own bounds (whole, positive pixels; 0–100 percent) are the schema's.
 */
export function rectangleShapeProblems(v: RectangleInput): string[] {
  const pixels = PIXEL_FIELDS.map((f) => v[f]);
  const percents = PERCENT_FIELDS.map((f) => v[f]);
  const forms = [pixels.some((f) => f !== undefined), percents.some((f) => f !== undefined), !!v.crop];
  const given = forms.filter(Boolean).length;
  if (given === 0) {
    return [
      'give the rectangle as x, y, width, height; as x_percent, y_percent, width_percent, height_percent; or as crop',
    ];
  }
  if (given > 1) return ['give the rectangle in exactly one form'];
  if ((forms[0] && pixels.includes(undefined)) || (forms[1] && percents.includes(undefined))) {
    return ['the rectangle is incomplete'];
  }
  const problems: string[] = [];
  const { x_percent: x, y_percent: y, width_percent: w, height_percent: h } = v;
  if (x !== undefined && w !== undefined && x + w > 100 + PERCENT_TOLERANCE) {
    problems.push(`x_percent + width_percent is ${x + w}: the rectangle reaches past the right edge`);
  }
  if (y !== undefined && h !== undefined && y + h > 100 + PERCENT_TOLERANCE) {
    problems.push(`y_percent + height_percent is ${y + h}: the rectangle reaches past the bottom edge`);
  }
  return problems;
}

/**
 * The pixel rectangle a (schema-valid) input names in the upright image of `imageWidth` x
 * `imageHeight`. Percent edges round outward (left and top down, right and bottom up) so the
 * crop covers the whole area asked for. A rectangle not inside the image is refused.
 */
export function resolveRectangle(input: RectangleInput, imageWidth: number, imageHeight: number): Rectangle {
  let rect: Rectangle;
  if (input.x_percent !== undefined) {
    // The tolerance keeps a product such as 400.00000000000006 from rounding up a pixel.
    const from = (percent: number, size: number) => Math.floor((percent * size) / 100 + PERCENT_TOLERANCE);
    const to = (percent: number, size: number) => Math.ceil((percent * size) / 100 - PERCENT_TOLERANCE);
    const left = from(input.x_percent, imageWidth);
    const top = from(input.y_percent ?? 0, imageHeight);
    const right = to(input.x_percent + (input.width_percent ?? 0), imageWidth);
    const bottom = to((input.y_percent ?? 0) + (input.height_percent ?? 0), imageHeight);
    rect = { left, top, width: right - left, height: bottom - top };
  } else {
    const r = input.crop ?? {
      x: input.x ?? 0,
      y: input.y ?? 0,
      width: input.width ?? 0,
      height: input.height ?? 0,
    };
    rect = { left: r.x, top: r.y, width: r.width, height: r.height };
  }
  if (
    rect.left < 0 ||
    rect.top < 0 ||
    rect.width < 1 ||
    rect.height < 1 ||
    rect.left + rect.width > imageWidth ||
    rect.top + rect.height > imageHeight
  ) {
    throw permanentFailure(
      'INVALID_RECTANGLE',
      `The rectangle ${rect.width}x${rect.height} at (${rect.left}, ${rect.top}) is not inside the ${imageWidth}x${imageHeight} image.`,
    );
  }
  return rect;
}
