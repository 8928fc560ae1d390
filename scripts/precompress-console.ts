import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'

const brotli = promisify(brotliCompress)
const gzipped = promisify(gzip)

/** The console's files worth compressing (text); images and fonts already are. */
const TEXT = /\.(js|mjs|css|html|svg|json|txt|map)$/

/** Smaller files are sent as they are: their compressed twin would not save a packet. */
const MIN_BYTES = 1024

/**
 * Writes `<file>.br` (brotli, best quality) and `<file>.gz` (gzip 9) next to each text file of the built console
 * in `dist`, for the Node server to send by the client's Accept-Encoding (src/console-node.ts). Only where the
 * twin is smaller. Workers static assets compress on their own and ignore the twins (console/public/.assetsignore).
 */
export async function precompressConsole(dist: string): Promise<{ files: number; bytes: number; brotliBytes: number }> {
  let files = 0
  let bytes = 0
  let brotliBytes = 0
  for (const entry of await readdir(dist, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !TEXT.test(entry.name)) continue
    const path = join(entry.parentPath, entry.name)
    const content = await readFile(path)
    if (content.length < MIN_BYTES) continue
    const [br, gz] = await Promise.all([
      brotli(content, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: content.length } }),
      gzipped(content, { level: 9 }),
    ])
    if (br.length < content.length) await writeFile(`${path}.br`, br)
    if (gz.length < content.length) await writeFile(`${path}.gz`, gz)
    files++
    bytes += content.length
    brotliBytes += Math.min(br.length, content.length)
  }
  return { files, bytes, brotliBytes }
}
