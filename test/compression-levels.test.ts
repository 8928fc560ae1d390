import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { compressionLevel, FAST_COMPRESSION_FROM_BYTES, withCompression } from '../src/compression-node.js'

// The Node home compresses an answer under 1 MiB densely (brotli 4, gzip 6) and a larger or streamed one fast (brotli 1,
// gzip 1): a 16 MB advanced playground answer cost 45 ms of compression at quality 4, more than its evaluation.

const json = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ name: `flag-${i}`, enabled: i % 3 === 0, variant: { name: 'disabled', enabled: false } })))

const streamed = (text: string) =>
  new Response(
    new ReadableStream<Uint8Array>({
      start(controller) {
        const bytes = new TextEncoder().encode(text)
        for (let at = 0; at < bytes.byteLength; at += 64 * 1024) controller.enqueue(bytes.subarray(at, at + 64 * 1024))
        controller.close()
      },
    }),
    { headers: { 'content-type': 'application/json' } },
  )

const fetchThrough = async (answer: () => Response, encoding: string) => {
  const compressed = withCompression(async () => answer())
  const response = await compressed(new Request('http://flagpost.test/api/admin/playground/advanced', { headers: { 'accept-encoding': encoding } }), {})
  return { encoding: response.headers.get('content-encoding'), bytes: Buffer.from(await response.arrayBuffer()) }
}

describe('compression levels', () => {
  it('chooses the dense level under 1 MiB and the fast one from 1 MiB or for an answer of unknown size', () => {
    expect(compressionLevel(1024)).toBe('dense')
    expect(compressionLevel(FAST_COMPRESSION_FROM_BYTES - 1)).toBe('dense')
    expect(compressionLevel(FAST_COMPRESSION_FROM_BYTES)).toBe('fast')
    expect(compressionLevel(undefined)).toBe('fast')
  })

  it('sends a streamed answer compressed fast, whole once decoded; a held small one densely (smaller than the fast level makes it)', async () => {
    const big = json(40_000)
    expect(big.length).toBeGreaterThan(FAST_COMPRESSION_FROM_BYTES)
    for (const [encoding, decode] of [['br', brotliDecompressSync], ['gzip', gunzipSync]] as const) {
      const answer = await fetchThrough(() => streamed(big), encoding)
      expect(answer.encoding).toBe(encoding)
      expect(decode(answer.bytes).toString()).toBe(big)
    }
    // The same small answer, held whole or streamed (unknown size: fast): the dense level makes it smaller.
    const small = json(2_000)
    const held = await fetchThrough(() => new Response(small, { headers: { 'content-type': 'application/json', 'content-length': String(small.length) } }), 'br')
    const fast = await fetchThrough(() => streamed(small), 'br')
    expect(brotliDecompressSync(held.bytes).toString()).toBe(small)
    expect(brotliDecompressSync(fast.bytes).toString()).toBe(small)
    expect(held.bytes.byteLength).toBeLessThan(fast.bytes.byteLength)
  })
})
