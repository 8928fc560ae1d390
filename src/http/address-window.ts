import { Lru } from '../core/lru.js'

/**
 * A per-address count over a sliding window, for the sign-in and signal limits: `hit` counts one request under each
 * of its keys (limitKeysOf: the address's key and, for IPv6, its /48 with a larger allowance) and answers the
 * seconds to wait when any key is already at its allowance (then nothing is counted). At most `maxKeys` keys are
 * remembered: a flood of addresses forgets the oldest, it never grows memory without bound.
 */
export function addressWindow(windowMs: number, maxKeys = 10_000) {
  const hits = new Lru<string, number[]>({ maxEntries: maxKeys })
  return (keys: [string, number][], now: number): number | undefined => {
    const recent = keys.map(([key]) => (hits.get(key) ?? []).filter((at) => at > now - windowMs))
    const full = keys.findIndex(([, allowance], i) => recent[i]!.length >= allowance)
    if (full >= 0) {
      hits.set(keys[full]![0], recent[full]!)
      return Math.max(1, Math.ceil((recent[full]![0]! + windowMs - now) / 1000))
    }
    keys.forEach(([key], i) => hits.set(key, [...recent[i]!, now]))
    return undefined
  }
}
