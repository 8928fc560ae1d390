// The answers' hashes (ETags of the frontend API and OFREP, SDK payload keys): WebCrypto on Workers, the hash the Node
// server gives (node:crypto) on Node. Both must be SHA-256 of the same UTF-8 bytes.
import { describe, expect, it } from 'vitest'
import { sha256Hex } from '../src/client-api/sha256.js'

const webCrypto = async (text: string) => Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))).toString('hex')

const TEXTS = ['', 'abc', '{"toggles":[]}', 'Grüße, 日本, ÿ', '🚩 flag', 'lone \ud800 surrogate \udfff', 'x'.repeat(100_000)]

describe('sha256Hex', () => {
  it('is the hash WebCrypto gives, before and after the Node server gives its own, for ASCII, other scripts, astral characters, lone surrogates and the empty text', async () => {
    for (const text of TEXTS) expect(await sha256Hex(text), JSON.stringify(text.slice(0, 20))).toBe(await webCrypto(text))
    await import('../src/server.js')
    for (const text of TEXTS) expect(await sha256Hex(text), JSON.stringify(text.slice(0, 20))).toBe(await webCrypto(text))
    expect(await sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })
})
