/**
 * The named moments the fault and chaos suites kill a process at (FAULT_PAUSE_AT): each is a point
 * where work has happened that is not yet recorded, so a crash there is the worst case for it.
 */
export const FAULT_POINTS = [
  /** The send's statement committed, its workflow not yet started (gateway). */
  'admission',
  /** A model reply came back, not yet recorded (worker). */
  'model-step',
  /** A webhook receiver answered a POST, the attempt and delivery not yet recorded (worker). */
  'webhook-answered',
  /** An object's bytes are on local disk, not yet renamed into place (worker, local storage). */
  'storage-put',
  /** A tool call's success is recorded (and its deliveries started), its workflow not yet told (worker). */
  'tool-recorded',
  /** A run's ending is recorded (it may have promoted the chat's next queued turn), its workflow not yet told (worker). */
  'run-finished',
] as const;

export type FaultPoint = (typeof FAULT_POINTS)[number];
