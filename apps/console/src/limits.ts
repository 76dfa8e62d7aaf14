/** The API's limits and their messages, put in the page by the gateway from the API's own constants. */
export interface Limits {
  maxFiles: number;
  maxFileBytes: number;
  maxText: number;
  tooManyFiles: string;
  fileTooLarge: string;
  webhookEvents: string[];
}

export const limits = JSON.parse(
  document.querySelector('meta[name="console-limits"]')?.getAttribute('content') ?? '{}',
) as Limits;

/** The API's refusal for these files, or null when it would take them. */
export function refuseFiles(files: File[]): string | null {
  if (files.length > limits.maxFiles) return limits.tooManyFiles;
  if (files.some((f) => f.size > limits.maxFileBytes)) return limits.fileTooLarge;
  return null;
}
