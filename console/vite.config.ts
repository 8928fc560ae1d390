import { fileURLToPath } from 'node:url'
import { defineConfig, type Plugin } from 'vite'
import react from '@vitejs/plugin-react'
import { initialJavaScript, INITIAL_JS_BUDGET } from '../scripts/console-size.js'

const root = fileURLToPath(new URL('.', import.meta.url))

/** Prints the JavaScript index.html loads, gzipped, against its budget (a test holds it). */
function printInitialSize(): Plugin {
  return {
    name: 'flagpost-initial-size',
    apply: 'build',
    async closeBundle() {
      const { gzipBytes, files } = await initialJavaScript(`${root}dist`)
      console.log(`console: initial JavaScript ${(gzipBytes / 1024).toFixed(1)} KiB gzipped (budget ${INITIAL_JS_BUDGET / 1024} KiB): ${files.join(', ')}`)
    },
  }
}

export default defineConfig({
  root,
  base: '/',
  plugins: [react(), printInitialSize()],
  build: { outDir: 'dist', emptyOutDir: true, reportCompressedSize: false },
  server: { proxy: { '/api': 'http://localhost:4242', '/auth': 'http://localhost:4242', '/logout': 'http://localhost:4242' } },
})
