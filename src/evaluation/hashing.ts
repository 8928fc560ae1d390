const STRATEGY_SEED = 0
const VARIANT_SEED = 86028157

const rotl = (x: number, n: number) => (x << n) | (x >>> (32 - n))
const mixKey = (k: number) => Math.imul(rotl(Math.imul(k, 0xcc9e2d51), 15), 0x1b873593)
// A function of its own, not a closure over the key made on every call (that cost more than hashing a short key).
const byte = (key: string, i: number) => key.charCodeAt(i) & 0xff

/**
 * MurmurHash3 x86 32-bit of the string's UTF-16 code units masked to 8 bits, as an unsigned int: what the Unleash Node
 * SDK hashes with (the murmurhash3js package, whose other hashes the worker bundle need not carry;
 * test/evaluation/hashing.test.ts holds the two equal).
 */
export function murmurHash32(key: string, seed: number): number {
  const tail = key.length % 4
  const end = key.length - tail
  let h = seed
  let i = 0
  for (; i < end; i += 4) {
    h = rotl(h ^ mixKey(byte(key, i) | (byte(key, i + 1) << 8) | (byte(key, i + 2) << 16) | (byte(key, i + 3) << 24)), 13)
    h = (Math.imul(h, 5) + 0xe6546b64) | 0
  }
  let k = 0
  if (tail === 3) k ^= byte(key, i + 2) << 16
  if (tail >= 2) k ^= byte(key, i + 1) << 8
  if (tail >= 1) h ^= mixKey(k ^ byte(key, i))
  h ^= key.length
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/** The bucket, 1..100, that a rollout percentage is compared to. */
export function normalizedStrategyValue(id: string, groupId: string): number {
  return (murmurHash32(`${groupId}:${id}`, STRATEGY_SEED) % 100) + 1
}

/** The point, 1..normalizer, on the variants' cumulative weights. */
export function normalizedVariantValue(id: string, groupId: string, normalizer: number): number {
  return (murmurHash32(`${groupId}:${id}`, VARIANT_SEED) % normalizer) + 1
}
