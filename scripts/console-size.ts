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

/**
 * What the console's first paint may wait for in CSS: the stylesheets index.html links (render-blocking), gzipped.
 * 12.9 KiB since Mantine's CSS is imported per component, the frame's only (36.0 KiB for Mantine's whole file before).
 */
export const INITIAL_CSS_BUDGET = 16 * 1024

/** The stylesheets the built index.html in `dist` links, and their gzipped size together. */
export async function initialCss(dist: string): Promise<{ files: string[]; gzipBytes: number }> {
  const html = await readFile(join(dist, 'index.html'), 'utf8')
  const files = [...html.matchAll(/<link[^>]*rel="stylesheet"[^>]*\shref="([^"]+\.css)"/g)].map((m) => m[1]!)
  let gzipBytes = 0
  for (const file of files) gzipBytes += gzipSync(await readFile(join(dist, file.replace(/^\//, '')))).length
  return { files, gzipBytes }
}
