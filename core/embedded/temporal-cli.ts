import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { SearchAttributeType } from '@temporalio/common';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';

const SCRIPT = path.resolve(__dirname, '../../scripts/temporal-cli.sh');

/** The one way every part of the project finds (or builds) the Temporal CLI: scripts/temporal-cli.sh. */
export async function resolveTemporalCli(): Promise<string> {
  const child = promisify(execFile)('bash', [SCRIPT], { maxBuffer: 1024 * 1024 });
  // The build's progress goes to stderr; show it as it happens.
  child.child.stderr?.pipe(process.stderr);
  const { stdout } = await child;
  return stdout.trim().split('\n').pop() ?? '';
}

export function searchAttributeFlags(keys: readonly SearchAttributeKey<SearchAttributeType>[]): string[] {
  const typeName: Record<string, string> = {
    KEYWORD: 'Keyword',
    TEXT: 'Text',
    INT: 'Int',
    DOUBLE: 'Double',
    BOOL: 'Bool',
    DATETIME: 'Datetime',
    KEYWORD_LIST: 'KeywordList',
  };
  return keys.flatMap((k) => ['--search-attribute', `${k.name}=${typeName[k.type] ?? 'Keyword'}`]);
}
