import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describeProcess, liveProcess } from './process/procfs';

/**
 * One `npm start` per data folder: `stack.pid` holds the supervisor's pid. A file whose process is
 * gone (a killed stack; or its pid now taken by another program) is stale and replaced. Resolves
 * to the release function, or to a sentence naming the stack that holds the folder.
 */
export async function lockDataFolder(dir: string): Promise<(() => Promise<void>) | string> {
  const file = path.join(dir, 'stack.pid');
  const mine = `${process.pid}\n`;
  const release = async () => {
    if ((await readFile(file, 'utf8').catch(() => '')) === mine) await rm(file, { force: true });
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await writeFile(file, mine, { flag: 'wx' });
      return release;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
    const holder = await liveProcess(pid);
    if (holder && pid !== process.pid && holder.command.includes('apps/stack/main.ts')) {
      return `the data folder ${dir} is in use by another npm start, ${describeProcess(holder)}`;
    }
    await rm(file, { force: true });
  }
  return `the data folder ${dir} could not be locked: ${file} keeps coming back`;
}
