import { ANY_ID, type NotificationHub } from '../core/db/notification-hub';
import type { UserLimit } from './limits';

/**
 * How long the caller of a checked API key is remembered for the answers a gateway gives from
 * memory. A revoked or deleted key is forgotten at once by every gateway (migration
 * api_key_notify); this bounds the rest.
 */
const KEY_MEMORY_MS = 30_000;
/** Past this many remembered keys (or users with leases), the oldest is forgotten. */
const KEY_MEMORY_MAX = 10_000;
/**
 * A key check takes a counter's points this many at a time per hundred of its limit: 12 of
 * API_RATE_LIMIT_PER_MINUTE's 1200, so one check in PostgreSQL counts twelve calls, and a poll with
 * points left needs no round trip at all. What a lease can cost a caller is bounded by it: the
 * points a gateway took and did not spend before the minute ended, at most 1 % of the limit per
 * gateway. Below a limit of 200 a lease is one point, as a check without one.
 */
const LEASE_PER_HUNDRED = 1;
/** A lease is capped too, so a huge limit (an operator's "no limit") still checks the key now and then. */
const MAX_LEASE = 100;

/** The points a check asks a counter for: more than one only when this gateway can keep the rest. */
export function leaseSize(perMinute: number, leasing: boolean): number {
  if (!leasing) return 1;
  return Math.min(MAX_LEASE, Math.max(1, Math.floor((perMinute * LEASE_PER_HUNDRED) / 100)));
}

/** Points of one counter this gateway took from PostgreSQL and has not spent: `next`…`last`. */
export interface Lease {
  next: number;
  last: number;
  /** the counter's minute ends (epoch ms); the lease with it */
  expire: number;
}

interface KnownKey {
  userId: string;
  apiKeyId: string;
  until: number;
}

/** By counter, the leases in the order they were taken (their points rise from one to the next). */
type Leases = Map<string, Lease[]>;

/** A key check under way: whether its answer may be kept, and whether it may take a lease. */
export interface KeyCheckTicket {
  generation: number;
  leasing: boolean;
}

/** What a call's counter stands at: for the RateLimit headers of its answer. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

const resetSeconds = (expire: number, now: number) => Math.max(1, Math.ceil((expire - now) / 1000));

/** Keeps `map` under KEY_MEMORY_MAX entries, the oldest forgotten first; `key` set last. */
function setBounded<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  if (map.size >= KEY_MEMORY_MAX) map.delete(map.keys().next().value as string);
  map.set(key, value);
}

/**
 * API keys this gateway checked lately, by key hash, and the counter points it took ahead of use
 * for their users (the counters are the user's, so every key of a user spends the same leases).
 * Any key's revocation (rare: a person does it) or a change of the listening connection forgets
 * them all; a check that began before such a change does not remember what it read.
 */
export function createKeyMemory(hub: NotificationHub) {
  const keys = new Map<string, KnownKey>();
  const leasesOf = new Map<string, Leases>();
  // Keys whose check is taking a lease now: a check beside it takes its one point only, so calls
  // that find no point left at the same moment take one lease between them, not one each.
  const leasing = new Set<string>();
  let generation = 0;
  let watching = false;
  const forget = () => {
    generation++;
    keys.clear();
    leasesOf.clear();
  };

  /** The key while it is remembered and this gateway hears of revocations; else undefined. */
  const known = (keyHash: string, now: number): KnownKey | undefined => {
    if (!hub.listening()) return undefined;
    const key = keys.get(keyHash);
    return key && key.until > now ? key : undefined;
  };

  return {
    forget,

    /** Call before a check of a key, and `endCheck` after it, whatever its outcome. */
    beginCheck(keyHash: string): KeyCheckTicket {
      if (!watching) {
        watching = true;
        hub.subscribe('api_keys', ANY_ID, forget);
      }
      // A lease taken while the gateway does not hear of revocations could not be kept.
      if (!hub.listening()) return { generation: -1, leasing: false };
      const ticket = { generation, leasing: !leasing.has(keyHash) };
      if (ticket.leasing) leasing.add(keyHash);
      return ticket;
    },

    endCheck(keyHash: string, ticket: KeyCheckTicket): void {
      if (ticket.leasing) leasing.delete(keyHash);
    },

    /**
     * Keeps a key the database just vouched for, with what it leased of each of its user's
     * counters: after the leases this gateway holds already, which stay its own (a check that took
     * no lease, as a send's of its send counter, must not cost the polls theirs).
     */
    remember(
      ticket: KeyCheckTicket,
      keyHash: string,
      key: { userId: string; apiKeyId: string },
      leases: ReadonlyMap<string, Lease>,
      now: number,
    ): void {
      if (ticket.generation !== generation) return;
      const kept: Leases = leasesOf.get(key.userId) ?? new Map();
      for (const [name, lease] of leases)
        kept.set(name, [...(kept.get(name) ?? []).filter((l) => l.expire > now && l.next <= l.last), lease]);
      setBounded(leasesOf, key.userId, kept);
      setBounded(keys, keyHash, { ...key, until: now + KEY_MEMORY_MS });
    },

    caller(keyHash: string, now: number): { userId: string; apiKeyId: string } | undefined {
      return known(keyHash, now);
    },

    /**
     * Spends one leased point of each of `limits` that has one left this minute, for a call: all of
     * them or none with `all`. Undefined when the key is not remembered (or, with `all`, some
     * counter has no point left); the counters not spent here are to be counted in PostgreSQL.
     */
    spend(
      keyHash: string,
      limits: readonly UserLimit[],
      now: number,
      { all }: { all: boolean },
    ): { key: { userId: string; apiKeyId: string }; counters: Map<string, RateLimitState> } | undefined {
      const key = known(keyHash, now);
      if (!key) return undefined;
      const leases = leasesOf.get(key.userId);
      const live = (limit: UserLimit) =>
        leases?.get(limit.name)?.find((l) => l.expire > now && l.next <= l.last);
      if (all && !limits.every(live)) return undefined;
      const counters = new Map<string, RateLimitState>();
      for (const limit of limits) {
        const lease = live(limit);
        if (!lease) continue;
        const point = lease.next++;
        counters.set(limit.name, {
          limit: limit.perMinute,
          remaining: limit.perMinute - point,
          resetSeconds: resetSeconds(lease.expire, now),
        });
      }
      return { key: { userId: key.userId, apiKeyId: key.apiKeyId }, counters };
    },
  };
}

export type KeyMemory = ReturnType<typeof createKeyMemory>;

/**
 * What a check's counter stands at once it took `granted` points: the call's own point is the
 * first of them (refused past the limit), the rest a lease for later calls.
 */
export function takePoints(
  limit: UserLimit,
  counter: { points: number; expire: number },
  granted: number,
  now: number,
): { state: RateLimitState; refused: boolean; lease?: Lease } {
  const point = counter.points - granted + 1;
  const state = {
    limit: limit.perMinute,
    remaining: Math.max(0, limit.perMinute - point),
    resetSeconds: resetSeconds(counter.expire, now),
  };
  if (point > limit.perMinute) return { state, refused: true };
  const last = Math.min(counter.points, limit.perMinute);
  return point < last
    ? { state, refused: false, lease: { next: point + 1, last, expire: counter.expire } }
    : { state, refused: false };
}

/** The counter with the fewest calls left: the one whose RateLimit headers a call answers with. */
export function tightest(states: readonly RateLimitState[]): RateLimitState | undefined {
  let least: RateLimitState | undefined;
  for (const state of states) if (!least || state.remaining < least.remaining) least = state;
  return least;
}
