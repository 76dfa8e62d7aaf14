/** The three tools, by name: what the console's schemas and the registry share (no other import). */
export const TOOL_NAMES = ['crop_image', 'ai_image_2', 'merge_videos'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];
