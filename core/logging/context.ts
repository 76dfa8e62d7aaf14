import { AsyncLocalStorage } from 'node:async_hooks';

/** The ids a log line carries when the work it was written for has them. */
export interface LogFields {
  userId?: string;
  chatId?: string;
  runId?: string;
  toolCallId?: string;
  deliveryId?: string;
}

const storage = new AsyncLocalStorage<LogFields>();

/**
 * Runs `fn` with `fields` on every line logged inside it, asynchronous continuations included (a
 * request, an activity). A nested call adds to the fields around it.
 */
export function withLogContext<T>(fields: LogFields, fn: () => T): T {
  return storage.run({ ...storage.getStore(), ...defined(fields) }, fn);
}

/** Adds ids learnt along the way (the caller once authenticated, the run once admitted). */
export function addLogContext(fields: LogFields): void {
  const store = storage.getStore();
  if (store) Object.assign(store, defined(fields));
}

/** The ids of the work in progress; empty outside a request or an activity. */
export function currentLogFields(): LogFields {
  return { ...storage.getStore() };
}

function defined(fields: LogFields): LogFields {
  return Object.fromEntries(
    Object.entries(fields).filter(([, v]) => typeof v === 'string' && v),
  ) as LogFields;
}
