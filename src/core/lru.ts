/**
 * A least-recently-used map bounded by entry count and by total weight (bytes, roughly). Per process on
 * Node, per isolate on Workers: a miss only costs a rebuild, so nothing here needs to be shared.
 *
 * With `ttlMs`, an entry is fresh for that long after it was set; with `staleMs` too, `lookup` still
 * returns it for that much longer (marked not fresh), so a caller can answer with it and check it again
 * after the response.
 */
export class Lru<K, V> {
  private readonly entries = new Map<K, { value: V; weight: number; storedAt: number; derived: boolean; recheckClaimedAt?: number }>()
  private totalWeight = 0

  constructor(
    private readonly limits: { maxEntries: number; maxWeight?: number; keepNewest?: number; ttlMs?: number; staleMs?: number },
    private readonly now: () => number = Date.now,
  ) {}

  /** The value while it is fresh. */
  get(key: K): V | undefined {
    const found = this.lookup(key)
    return found?.fresh ? found.value : undefined
  }

  /** The value while it is fresh or, past its ttl, for `staleMs` more (then `fresh: false`). */
  lookup(key: K): { value: V; fresh: boolean } | undefined {
    const entry = this.entries.get(key)
    if (!entry) return undefined
    const age = this.now() - entry.storedAt
    const ttl = this.limits.ttlMs ?? Infinity
    if (age >= ttl + (this.limits.staleMs ?? 0)) {
      this.delete(key)
      return undefined
    }
    // Re-inserting moves the key to the newest end of the Map's order.
    this.entries.delete(key)
    this.entries.set(key, entry)
    return { value: entry.value, fresh: age < ttl }
  }

  /** Claims the one check of a stale entry per ttl: true for the first caller, false until a ttl has passed. */
  claimRecheck(key: K): boolean {
    const entry = this.entries.get(key)
    if (!entry) return false
    const now = this.now()
    if (entry.recheckClaimedAt !== undefined && now - entry.recheckClaimedAt < (this.limits.ttlMs ?? Infinity)) return false
    entry.recheckClaimedAt = now
    return true
  }

  /**
   * Stores the value as the newest entry, then forgets the oldest others until the bounds hold. The entry just set is
   * never forgotten, even heavier than `maxWeight` alone (then it is the only one kept): refusing it would make every
   * caller of that key pay to rebuild it, which is what the cache is for. Likewise the `keepNewest` newest entries are kept
   * whatever their weight, so that a few scopes over the weight do not evict each other on every request.
   * A `derived` entry (one made cheaply from another held here) goes first and is never kept over the weight but as the
   * entry just set: callers choosing many keys of derived entries (SDK namePrefix values) evict only each other, within
   * `maxWeight`, never the entries they are derived from.
   */
  set(key: K, value: V, weight = 1, derived = false): void {
    this.delete(key)
    const maxWeight = this.limits.maxWeight ?? Infinity
    this.entries.set(key, { value, weight, storedAt: this.now(), derived })
    this.totalWeight += weight
    // No closure for the check: one made on every set showed in the profiles of writes and polls.
    for (const [oldest, entry] of this.entries) {
      if (this.within(maxWeight)) return
      if (oldest !== key && entry.derived) this.delete(oldest)
    }
    for (const oldest of this.entries.keys()) {
      if (oldest === key || this.entries.size <= Math.min(this.limits.keepNewest ?? 1, this.limits.maxEntries) || this.within(maxWeight)) break
      this.delete(oldest)
    }
  }

  private within(maxWeight: number): boolean {
    return this.entries.size <= this.limits.maxEntries && this.totalWeight <= maxWeight
  }

  delete(key: K): void {
    const entry = this.entries.get(key)
    if (!entry) return
    this.entries.delete(key)
    this.totalWeight -= entry.weight
  }

  clear(): void {
    this.entries.clear()
    this.totalWeight = 0
  }

  get size(): number {
    return this.entries.size
  }
}
