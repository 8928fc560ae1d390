/**
 * A pure function's results kept by argument, for arguments that recur (the people on flags, the versions in
 * contexts). Past `limit` different arguments all are forgotten at once: a bound on memory, not an LRU.
 */
export function memoize<K, V>(fn: (key: K) => V, limit: number): (key: K) => V {
  const results = new Map<K, V>()
  return (key) => {
    if (results.has(key)) return results.get(key)!
    if (results.size >= limit) results.clear()
    const result = fn(key)
    results.set(key, result)
    return result
  }
}
