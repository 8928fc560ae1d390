/// <reference path="./murmurhash3js.d.ts" />
// The engine's own MurmurHash3 x86 32-bit against the package the Unleash Node SDK hashes with.
import murmurHash3 from 'murmurhash3js'
import { describe, expect, it } from 'vitest'
import { murmurHash32 } from '../../src/evaluation/hashing.js'

describe('murmurHash32', () => {
  it('equals murmurhash3js x86.hash32 for every length, seed and kind of character', () => {
    const alphabet = ['a', 'Z', '0', ':', '-', 'é', 'ø', '€', '日', '😀', '\u00ff', '\u0100']
    let seed = 1
    const random = () => ((seed = Math.imul(seed, 48271) % 0x7fffffff) & 0x7fffffff) / 0x7fffffff
    const keys = ['', 'a', 'ab', 'abc', 'abcd', 'abcde', 'default:123', 'groupId:user-42']
    for (let n = 0; n < 2_000; n++) keys.push(Array.from({ length: Math.floor(random() * 40) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''))
    for (const key of keys) {
      for (const s of [0, 86028157, 1, 0xffffffff >>> 1]) expect(murmurHash32(key, s), `${JSON.stringify(key)} seed ${s}`).toBe(murmurHash3.x86.hash32(key, s))
    }
  })
})
