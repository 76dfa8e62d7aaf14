/**
 * What a reader of a run or a chat waits on between its reads: a notification (`wake`), the
 * reader's signal, or, if it gives one, a time (to read again anyway, or to send a heartbeat). A wake
 * that came during a read is kept, so the wait after that read returns at once.
 */
export function wakeUps(signal: AbortSignal) {
  let pending = false;
  let resolveWait: (() => void) | undefined;
  return {
    wake(): void {
      pending = true;
      resolveWait?.();
    },
    /** Whether a wake came since `clear`: a change not read yet. */
    woken(): boolean {
      return pending;
    },
    /** Forgets the wakes so far: called before a read, which sees what they announced. */
    clear(): void {
      pending = false;
    },
    /**
     * False at a wake (or one kept since `clear`) or the signal's abort; true after `ms` without.
     * Without `ms`, no timer: only a wake or the abort ends it.
     */
    wait(ms?: number): Promise<boolean> {
      return new Promise<boolean>((resolve) => {
        if (pending || signal.aborted) return resolve(false);
        const timer =
          ms === undefined
            ? undefined
            : setTimeout(() => {
                resolveWait = undefined;
                signal.removeEventListener('abort', done);
                resolve(true);
              }, ms);
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolveWait = undefined;
          resolve(false);
        }
        resolveWait = done;
        signal.addEventListener('abort', done);
      });
    },
  };
}
