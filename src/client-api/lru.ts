/**
 * A least-recently-used map bounded by entry count and by total weight (bytes, roughly). Per process on
 * Node, per isolate on Workers: a miss only costs a rebuild, so nothing here needs to be shared.
 */
export class Lru<K, V> {
  private readonly entries = new Map<K, { value: V; weight: number; expiresAt: number }>()
  private totalWeight = 0

  constructor(
    private readonly limits: { maxEntries: number; maxWeight?: number; ttlMs?: number },
    private readonly now: () => number = Date.now,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key)
    if (!entry) return undefined
    if (entry.expiresAt <= this.now()) {
      this.delete(key)
      return undefined
    }
    // Re-inserting moves the key to the newest end of the Map's order.
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry.value
  }

  set(key: K, value: V, weight = 1): void {
    this.delete(key)
    const maxWeight = this.limits.maxWeight ?? Infinity
    if (weight > maxWeight) return
    const ttl = this.limits.ttlMs
    this.entries.set(key, { value, weight, expiresAt: ttl === undefined ? Infinity : this.now() + ttl })
    this.totalWeight += weight
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.limits.maxEntries && this.totalWeight <= maxWeight) break
      this.delete(oldest)
    }
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
