/**
 * The retention pass's SQL shares one shape (operations/retention.ts): a statement deletes (or
 * clears) one batch of the oldest rows past their time, found through an index on what it selects
 * by, and checks the condition again on each row it deletes, so a row changed meanwhile (a key
 * claimed anew, an upload attached) is kept. `$1` is the age in ms, `$2` the batch's size.
 */

/** The moment `$1` ms before now: what is older has had its time. */
export const CUTOFF = `(now() - make_interval(secs => $1::float8 / 1000))`;
