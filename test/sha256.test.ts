// The answers' hashes (ETags of the frontend API and OFREP, SDK payload keys): node:crypto on Node, WebCrypto on Workers.
import { describe, expect, it } from 'vitest'
import { sha256Hex } from '../src/client-api/sha256.js'

const webCrypto = async (text: string) => Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))).toString('hex')

describe('sha256Hex', () => {
  it('is the hash WebCrypto gives, for ASCII, other scripts, astral characters, lone surrogates and the empty text', async () => {
    for (const text of ['', 'abc', '{"toggles":[]}', 'Grüße, 日本, ÿ', '🚩 flag', 'lone \ud800 surrogate \udfff', 'x'.repeat(100_000)]) {
      expect(await sha256Hex(text), JSON.stringify(text.slice(0, 20))).toBe(await webCrypto(text))
    }
    expect(await sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })
})
