// Types for darmok/redis (docs/CACHE.md is the reference).
import type { Class, Codec, Format, Registry, DarmokError } from './index';

/**
 * A connected client the cache recognises by its methods (no instanceof):
 * node-redis 4, 5 or 6 (`createClient`, `createCluster`) or ioredis 5 or 6
 * (`new Redis`, `new Cluster`). Typed loosely so that no client package is
 * needed to compile against darmok/redis.
 */
export type RedisClientLike = object;

export interface CacheOptions {
  /** The connected node-redis / ioredis client or cluster. The cache never connects, closes or configures it. */
  client: RedisClientLike;
  /** 'json' (default; entries read as text in redis-cli) or 'protobuf' (raw bytes). */
  format?: Format;
  /** Instead of format and registry: a codec from createCodec(). */
  codec?: Codec<any>;
  /** The class registry (default: the one serializable() fills). */
  registry?: Registry;
  /** Prepended to every key: the Redis key of an entry is exactly prefix + key. Default ''. */
  prefix?: string;
  /** Seconds an entry is fresh. Default 60. */
  ttl?: number;
  /** Seconds a cached `null` (the loader found nothing) is fresh. Default: ttl. */
  nullTtl?: number;
  /** Seconds past its ttl that getOrSet may still serve an entry while refreshing it. Default 0. */
  grace?: number;
  /** Milliseconds one Redis command may take; then it counts as failed. Default 250. */
  timeout?: number;
  /** Milliseconds a stale hit waits for its refresh before answering with the stale value. Default 0. */
  softTimeout?: number;
  /** Milliseconds a miss waits, from the miss, for its load before rejecting with ERR_LOAD_TIMEOUT (the loader goes on); 0: no bound (default). */
  hardTimeout?: number;
  /**
   * true (default): a Redis failure or timeout is reported and taken as a
   * miss. false: get/mget/getOrSet/set/mset/del reject with ERR_REDIS.
   */
  failOpen?: boolean;
  /** The cross-process lock around loads: true, or its times in milliseconds. Default false. */
  lock?: boolean | { ttl?: number; wait?: number; poll?: number };
  /** Every problem that is not thrown at a caller: ERR_REDIS, ERR_CACHE_ENTRY, a failed refresh. */
  onError?: (err: Error, key: string) => void;
  /**
   * The in-process tier: true, or its bounds. Hits touch no Redis; other
   * processes' changes arrive on a Redis pub/sub channel (the bus). Default false.
   */
  l1?: boolean | L1Options;
  /** A fraction of ttl: each write's ttl is shortened by up to this much, at random, to spread expiries. Default 0. */
  jitter?: number;
  /** A fraction of ttl: a getOrSet hit on an entry older than this starts one background refresh. Default 0 (off). */
  refreshAhead?: number;
  /** pino-style logger: warn for problems reported, debug for the bus. */
  logger?: { debug(...args: any[]): void; warn(...args: any[]): void; error(...args: any[]): void };
  /**
   * The circuit breaker, on by default: after `threshold` Redis failures in
   * a row it sends nothing for `cooldown` ms (each command fails at once:
   * a miss with failOpen), then lets one probe through. onError hears of
   * the opening once; the refused commands are counted
   * (stats().breakerRefusals), not reported. false turns it off.
   */
  breaker?: boolean | BreakerOptions;
}

export interface L1Options {
  /** Entries kept at most. Default 1000. */
  maxEntries?: number;
  /** Bytes of stored documents kept at most. Default 16 MiB. */
  maxBytes?: number;
  /** Seconds an L1 entry is still served while the bus is down. Default 2. */
  ttl?: number;
  /** true: a hit returns one shared instance (read-only use); false (default): a new instance per hit. */
  shared?: boolean;
}

export interface BreakerOptions {
  /** Redis failures (errors or timeouts) in a row that open the breaker. Default 5. */
  threshold?: number;
  /** Milliseconds within which those failures must fall; older ones are forgotten. Default 10000. */
  window?: number;
  /** Milliseconds the breaker stays open before one command is let through as a probe. Default 5000. */
  cooldown?: number;
}

/** 'open': commands fail at once; 'half-open': one probe is out; 'closed': commands are sent. */
export type BreakerState = 'closed' | 'open' | 'half-open';

export interface SetOptions {
  /** Seconds fresh; default the cache's ttl. */
  ttl?: number;
  /** Seconds a cached null is fresh. */
  nullTtl?: number;
  /** Seconds served stale by getOrSet after ttl. */
  grace?: number;
  /** A fraction of ttl to shorten it by, at random. */
  jitter?: number;
  /** Tags of the entry, for deleteByTag. */
  tags?: string | string[];
}

export interface GetOrSetOptions extends SetOptions {
  softTimeout?: number;
  hardTimeout?: number;
  /** Use the cross-process lock for this call (default: the cache's `lock`). */
  lock?: boolean;
  /** A fraction of ttl after which a hit starts a background refresh. */
  refreshAhead?: number;
}

/** What getOrSet's loader is called with. */
export interface LoaderContext<T> {
  /** The stale value being refreshed (within grace, or by refreshAhead), else undefined. */
  readonly stale: T | undefined;
  /** Seconds the value is fresh, instead of the call's ttl. */
  setTtl(seconds: number): void;
  /** The value's tags, instead of the call's. */
  setTags(tags: string | string[]): void;
  /** Return the value without caching it. */
  skip(): void;
}

export interface CacheStats {
  /** Fresh entries returned, from either tier (l1Hits + redisHits). */
  hits: number;
  l1Hits: number;
  redisHits: number;
  /** Invalidations other processes sent that this one applied. */
  busMessages: number;
  /** 'off' without l1; 'up' while bus messages arrive; 'down'. */
  bus: 'off' | 'up' | 'down';
  /** The circuit breaker's state. */
  breaker: 'closed' | 'open' | 'half-open';
  /** Commands the open breaker did not send (not reported to onError). */
  breakerRefusals: number;
  /** Entries in the L1. */
  l1Entries: number;
  staleHits: number;
  misses: number;
  loads: number;
  loadErrors: number;
  lockWaits: number;
  errors: number;
  /** (hits + staleHits) / (hits + staleHits + misses); 0 before any lookup. */
  hitRate: number;
}

export type CacheEvent = 'hit' | 'miss' | 'stale' | 'load' | 'lockWait';

export interface Cache {
  readonly format: Format;
  readonly prefix: string;
  readonly codec: Codec<any>;
  /** The fresh value, or null on a miss (absent, stale, unusable, Redis failed with failOpen). */
  get<T = any>(key: string, Class?: Class<T> | null): Promise<T | null>;
  /** SET prefix+key PX (ttl + grace). Resolves false when nothing was written (undefined, or Redis failed with failOpen). */
  set(key: string, value: unknown, options?: SetOptions): Promise<boolean>;
  /** One MGET (one per hash slot on a cluster); values in the order of keys. */
  mget<T = any>(keys: ReadonlyArray<string>, Class?: Class<T> | null): Promise<Array<T | null>>;
  /** Resolves to how many entries were written. */
  mset(entries: Iterable<readonly [string, unknown]>, options?: SetOptions): Promise<number>;
  /** Resolves to how many keys existed. */
  del(keys: string | ReadonlyArray<string>): Promise<number>;
  /** The cached value, or the loader's (cached; null too, undefined not). */
  getOrSet<T>(key: string, Class: Class<any> | null | undefined, loader: (ctx: LoaderContext<T>) => T | Promise<T>, options?: GetOrSetOptions): Promise<T>;
  /** Every entry with one of the tags becomes a miss, in every process. Resolves false when Redis failed (failOpen). */
  deleteByTag(tags: string | ReadonlyArray<string>): Promise<boolean>;
  /** Removes every key under this cache's (or namespace's) prefix, on every master (SCAN + UNLINK); how many. */
  clear(): Promise<number>;
  /** A cache over prefix + name + ':', sharing the client, the L1, the bus and the options. */
  namespace(name: string): Cache;
  /** Closes the bus's subscriber connection (the client stays open: it is yours). */
  close(): Promise<void>;
  stats(): CacheStats;
  on(event: CacheEvent, listener: (key: string) => void): Cache;
  on(event: 'error', listener: (err: Error, key: string) => void): Cache;
  on(event: 'invalidate', listener: (message: object) => void): Cache;
  /** The breaker changed state. */
  on(event: 'breaker', listener: (state: BreakerState) => void): Cache;
  off(event: CacheEvent | 'error' | 'invalidate' | 'breaker', listener: (...args: any[]) => void): Cache;
  /** The Redis key of an entry: prefix + key. */
  redisKey(key: string): string;
}

export function createCache(options: CacheOptions): Cache;

/** The suffix of a lock's Redis key (prefix + key + LOCK_SUFFIX). */
export const LOCK_SUFFIX: string;

/** The cache's defaults: prefix, ttl, grace, timeout, softTimeout, hardTimeout, lockTtl, lockWait, lockPoll. */
export const DEFAULTS: Readonly<Record<string, string | number>>;

export type { DarmokError };

declare const redis: {
  createCache: typeof createCache;
  LOCK_SUFFIX: typeof LOCK_SUFFIX;
  DEFAULTS: typeof DEFAULTS;
};
export default redis;
