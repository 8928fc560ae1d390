const STRATEGY_SEED = 0
const VARIANT_SEED = 86028157

const rotl = (m: number, n: number) => (m << n) | (m >>> (32 - n))
const mix = (k: number) => Math.imul(rotl(Math.imul(k, 0xcc9e2d51), 15), 0x1b873593)

/**
 * MurmurHash3 x86 32-bit exactly as murmurhash3js (the package the Unleash Node SDK hashes with) computes it: each
 * UTF-16 code unit's low byte, and the length in code units. Written here: the package weighed 1.8 KiB gzipped in the worker.
 */
export function hash32(key: string, seed: number): number {
  const byte = (j: number) => key.charCodeAt(j) & 0xff
  const tail = key.length & 3
  const bytes = key.length - tail
  let h = seed | 0
  let i = 0
  for (; i < bytes; i += 4) {
    h ^= mix(byte(i) | (byte(i + 1) << 8) | (byte(i + 2) << 16) | (byte(i + 3) << 24))
    h = (Math.imul(rotl(h, 13), 5) + 0xe6546b64) | 0
  }
  let k = 0
  if (tail === 3) k ^= byte(i + 2) << 16
  if (tail >= 2) k ^= byte(i + 1) << 8
  if (tail >= 1) h ^= mix(k ^ byte(i))
  h ^= key.length
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/** The bucket, 1..100, that a rollout percentage is compared to. */
export function normalizedStrategyValue(id: string, groupId: string): number {
  return (hash32(`${groupId}:${id}`, STRATEGY_SEED) % 100) + 1
}

/** The point, 1..normalizer, on the variants' cumulative weights. */
export function normalizedVariantValue(id: string, groupId: string, normalizer: number): number {
  return (hash32(`${groupId}:${id}`, VARIANT_SEED) % normalizer) + 1
}
