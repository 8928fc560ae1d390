import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'

/** What the console's first load may cost: the scripts index.html loads (and preloads), gzipped. */
// 128 KiB since the banners, the account's menu, the notifications' container and the header's tooltip left it (178 KiB before).
export const INITIAL_JS_BUDGET = 140 * 1024

/** The scripts the built index.html in `dist` loads or module-preloads, and their gzipped size together. */
export async function initialJavaScript(dist: string): Promise<{ files: string[]; gzipBytes: number }> {
  const html = await readFile(join(dist, 'index.html'), 'utf8')
  const files = [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*rel="modulepreload"[^>]*\shref)="([^"]+\.js)"/g)].map((m) => m[1]!)
  let gzipBytes = 0
  for (const file of files) gzipBytes += gzipSync(await readFile(join(dist, file.replace(/^\//, '')))).length
  return { files, gzipBytes }
}
