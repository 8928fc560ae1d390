// Which encoding the Node server compresses an answer with, from the client's Accept-Encoding.
import { describe, expect, it } from 'vitest'
import { chosenEncoding } from '../src/compression-node.js'

describe('chosenEncoding', () => {
  it('takes the higher q-value, brotli on a tie, nothing for refused or unknown encodings', () => {
    const cases: [string | null, 'br' | 'gzip' | undefined][] = [
      [null, undefined],
      ['', undefined],
      ['identity', undefined],
      ['deflate', undefined],
      ['gzip', 'gzip'],
      ['br', 'br'],
      ['gzip, br', 'br'],
      ['br;q=0.5, gzip', 'gzip'],
      ['gzip;q=0.5, br;q=0.9', 'br'],
      ['br;q=0, gzip', 'gzip'],
      ['br;q=0, gzip;q=0', undefined],
      ['*', 'br'],
      ['*;q=0.3, gzip', 'gzip'],
      ['*;q=0, gzip', 'gzip'],
      ['*;q=0', undefined],
      ['GZIP ; q=1 , BR ; q=0.1', 'gzip'],
      // A q-value that is no number accepts nothing.
      ['*;q=.', undefined],
      ['br;q=., gzip;q=.', undefined],
      ['br;q=1, gzip;q=.', 'br'],
      ['gzip;q=., br;q=0.1', 'br'],
    ]
    for (const [accept, expected] of cases) expect(chosenEncoding(accept), String(accept)).toBe(expected)
  })
})
