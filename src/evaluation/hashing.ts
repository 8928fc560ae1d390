const STRATEGY_SEED = 0
const VARIANT_SEED = 86028157

/**
 * MurmurHash3 x86 32-bit as the murmurhash3js package computes it (what the Unleash Node SDK hashes with): each UTF-16
 * code unit taken as one byte (its low 8 bits). Our own few lines rather than the package, which also ships the 128-bit
 * variants: test/evaluation/engine.test.ts holds them equal.
 */
export function hash32(key: string, seed: number): number {
  const c1 = 0xcc9e2d51
  const c2 = 0x1b873593
  const tail = key.length & 3
  const end = key.length - tail
  const byte = (i: number) => key.charCodeAt(i) & 0xff
  let h = seed
  let k: number
  let i = 0
  for (; i < end; i += 4) {
    k = Math.imul(byte(i) | (byte(i + 1) << 8) | (byte(i + 2) << 16) | (byte(i + 3) << 24), c1)
    h ^= Math.imul((k << 15) | (k >>> 17), c2)
    h = (h << 13) | (h >>> 19)
    h = (Math.imul(h, 5) + 0xe6546b64) | 0
  }
  if (tail > 0) {
    k = 0
    if (tail === 3) k ^= byte(i + 2) << 16
    if (tail >= 2) k ^= byte(i + 1) << 8
    k = Math.imul(k ^ byte(i), c1)
    h ^= Math.imul((k << 15) | (k >>> 17), c2)
  }
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
