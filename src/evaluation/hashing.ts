/// <reference path="./murmurhash3js.d.ts" />
import murmurHash3 from 'murmurhash3js'

const STRATEGY_SEED = 0
const VARIANT_SEED = 86028157

const hash32 = murmurHash3.x86.hash32

/** The bucket, 1..100, that a rollout percentage is compared to. */
export function normalizedStrategyValue(id: string, groupId: string): number {
  return (hash32(`${groupId}:${id}`, STRATEGY_SEED) % 100) + 1
}

/** The point, 1..normalizer, on the variants' cumulative weights. */
export function normalizedVariantValue(id: string, groupId: string, normalizer: number): number {
  return (hash32(`${groupId}:${id}`, VARIANT_SEED) % normalizer) + 1
}
