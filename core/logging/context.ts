import { AsyncLocalStorage } from 'node:async_hooks';

/** The ids a log line carries when the work it was written for has them. */
export interface LogFields {
  /** The gateway's request id (`x-request-id`). */
  requestId?: string;
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

/**
 * The fields of the work in progress, kept as they are (ids learnt later are added to them), so a
 * line can be written under them from outside it: see inLogContext.
 */
export function captureLogContext(): LogFields | undefined {
  return storage.getStore();
}

/** Runs `fn` under fields captured earlier (a request's own line, written once it is answered). */
export function inLogContext<T>(captured: LogFields | undefined, fn: () => T): T {
  return captured ? storage.run(captured, fn) : fn();
}

/** The ids of the work in progress; empty outside a request or an activity. */
export function currentLogFields(): LogFields {
  return { ...storage.getStore() };
}

function defined(fields: LogFields): LogFields {
  // A loop, not entries/filter/fromEntries: this runs on every request and every id learnt.
  const out: LogFields = {};
  for (const key in fields) {
    const value = fields[key as keyof LogFields];
    if (typeof value === 'string' && value) out[key as keyof LogFields] = value;
  }
  return out;
}
