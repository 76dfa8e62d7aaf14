import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The programs tests run are prepared before a suite starts, by scripts/test-setup.sh (npm runs it
 * first: `pretest`, `pretest:faults`, ...). A test only looks them up, so nothing is built or
 * installed inside a hook with a timeout; a missing one fails at once, naming that command.
 */
const ROOT = path.resolve(__dirname, '..');
const exec = promisify(execFile);

function stderrOf(err: unknown): string | undefined {
  return (err as { stderr?: string }).stderr?.trim() || undefined;
}

/** The path printed by one of the tool scripts of scripts/ (minio.sh, ...) in its look-up-only mode. */
export async function preparedTool(script: string, args: readonly string[] = []): Promise<string> {
  try {
    const { stdout } = await exec('bash', [path.join(ROOT, 'scripts', script), '--find', ...args]);
    return stdout.trim();
  } catch (err) {
    throw new Error(stderrOf(err) ?? String(err));
  }
}

/** `command` as found on PATH (a system package, such as ffmpeg). */
export async function preparedCommand(command: string): Promise<string> {
  try {
    const { stdout } = await exec('sh', ['-c', 'command -v "$1"', 'sh', command]);
    return stdout.trim();
  } catch {
    throw new Error(
      `${command} is not on PATH: run \`npm run test:setup\` to install it (npm test runs it first).`,
    );
  }
}
