// Bundles the worker (src/worker.ts → dist/worker.js) for wrangler, which runs this as its build step
// (wrangler.toml [build]) before `wrangler dev`, `deploy` and `versions upload`. It prints the size,
// gzipped, against the budget. Our own esbuild step exists for one reason: @hono/zod-openapi hands
// zod's whole namespace object around, which keeps all of zod in the bundle, used or not. So every one
// of zod's ~250 message locales but English is left out, and so is `z.fromJSONSchema` (building schemas
// from JSON Schema, which neither the app nor its libraries call): calling it throws.
import { mkdirSync, readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { gzipSync } from 'node:zlib'
import { build, type Plugin } from 'esbuild'

const OUT = 'dist/worker.js'
export const BUDGET_GZIP_BYTES = 250 * 1024

const inZod = (importer: string) => /[\\/]zod[\\/]/.test(importer)

const zodUnusedLeftOut: Plugin = {
  name: 'zod-unused-left-out',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) => (inZod(args.importer) ? { path: args.path, namespace: 'zod-locales' } : undefined))
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, () => ({
      contents: 'export { default as en } from "zod/v4/locales/en.js"',
      resolveDir: process.cwd(),
    }))
    b.onResolve({ filter: /\/from-json-schema\.js$/ }, (args) => (inZod(args.importer) ? { path: args.path, namespace: 'zod-from-json-schema' } : undefined))
    b.onLoad({ filter: /.*/, namespace: 'zod-from-json-schema' }, () => ({
      contents: 'export function fromJSONSchema() { throw new Error("z.fromJSONSchema is left out of the worker bundle (scripts/build-worker.ts)") }',
    }))
  },
}

export async function buildWorker(outfile = OUT) {
  mkdirSync(dirname(outfile), { recursive: true })
  await build({
    entryPoints: ['src/worker.ts'],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    minify: true,
    sourcemap: true,
    legalComments: 'none',
    plugins: [zodUnusedLeftOut],
    logLevel: 'warning',
  })
  const code = readFileSync(outfile)
  return { bytes: code.length, gzipBytes: gzipSync(code).length }
}

if (process.argv[1]?.endsWith('build-worker.ts')) {
  const { bytes, gzipBytes } = await buildWorker()
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`
  console.log(`${OUT}: ${kib(bytes)}, ${kib(gzipBytes)} gzipped (budget ${kib(BUDGET_GZIP_BYTES)})`)
  // The budget is enforced by test/tooling/worker-bundle.test.ts; here it only warns, so `wrangler dev` still starts.
  if (gzipBytes > BUDGET_GZIP_BYTES) console.warn('Warning: the worker bundle is over its budget.')
}
