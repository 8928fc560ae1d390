import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig, type Plugin } from 'vite'
import react from '@vitejs/plugin-react'
import { initialCss, initialJavaScript, INITIAL_CSS_BUDGET, INITIAL_JS_BUDGET } from '../scripts/console-size.js'
import { precompressConsole } from '../scripts/precompress-console.js'

const root = fileURLToPath(new URL('.', import.meta.url))

/** Prints the JavaScript and CSS index.html loads, gzipped, against their budgets (a test holds them). */
function printInitialSize(): Plugin {
  return {
    name: 'flagpost-initial-size',
    apply: 'build',
    async closeBundle() {
      const { gzipBytes, files } = await initialJavaScript(`${root}dist`)
      console.log(`console: initial JavaScript ${(gzipBytes / 1024).toFixed(1)} KiB gzipped (budget ${INITIAL_JS_BUDGET / 1024} KiB): ${files.join(', ')}`)
      const css = await initialCss(`${root}dist`)
      console.log(`console: render-blocking CSS ${(css.gzipBytes / 1024).toFixed(1)} KiB gzipped (budget ${INITIAL_CSS_BUDGET / 1024} KiB): ${css.files.join(', ')}`)
    },
  }
}

/** Writes brotli and gzip twins of the built text files, which the Node server sends by content negotiation. */
function precompress(): Plugin {
  return {
    name: 'flagpost-precompress',
    apply: 'build',
    // After every other plugin's closeBundle (the size report reads the files as built).
    enforce: 'post',
    async closeBundle() {
      const { files, bytes, brotliBytes } = await precompressConsole(`${root}dist`)
      console.log(`console: ${files} files precompressed (brotli ${(bytes / 1024).toFixed(0)} KiB -> ${(brotliBytes / 1024).toFixed(0)} KiB, and gzip)`)
    },
  }
}

/**
 * The API reference of `/docs` (src/api-reference.ts): Swagger UI's files from its npm package, written next to the
 * console's files (`/api-reference/`), so the page loads only scripts of its own origin under the console's CSP, and on
 * Workers they are static assets, not part of the worker's bundle. Source map comments are dropped (no map is shipped).
 */
function apiReferenceAssets(): Plugin {
  return {
    name: 'flagpost-api-reference',
    apply: 'build',
    async generateBundle() {
      const swaggerUi = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
      for (const file of ['swagger-ui-bundle.js', 'swagger-ui-bundle.js.LICENSE.txt', 'swagger-ui.css']) {
        const text = (await readFile(join(swaggerUi, file), 'utf8')).replace(/\n?\/[*/]# sourceMappingURL=[^\n]*\s*$/, '\n')
        this.emitFile({ type: 'asset', fileName: `api-reference/${file}`, source: text })
      }
    },
  }
}

export default defineConfig({
  root,
  base: '/',
  plugins: [react(), printInitialSize(), apiReferenceAssets(), precompress()],
  build: { outDir: 'dist', emptyOutDir: true, reportCompressedSize: false },
  server: { proxy: { '/api': 'http://localhost:4242', '/auth': 'http://localhost:4242', '/logout': 'http://localhost:4242' } },
})
