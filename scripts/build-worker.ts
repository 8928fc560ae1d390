// Bundles the worker (src/worker.ts → dist/worker.js) for wrangler, which runs this as its build step
// (wrangler.toml [build]) before `wrangler dev`, `deploy` and `versions upload`. It prints the size,
// gzipped, against the budget. Our own esbuild step exists for one reason: @hono/zod-openapi hands
// zod's whole namespace object around, which keeps all of zod in the bundle, used or not. So every one
// of zod's ~250 message locales but English is left out, and so are the parts nothing in the worker runs:
// `z.fromJSONSchema` (schemas from JSON Schema), `z.toJSONSchema` (the OpenAPI document is made by
// zod-to-openapi, which does not call it; it does read what zod's JSON Schema processors gather of a schema's
// checks, so those stay), and zod's JIT compiler of parsers (it builds code with `new Function`, which
// Workers refuse, so zod parses without it there). Calling any of them throws.
import { mkdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { build, type Plugin } from 'esbuild'

const OUT = 'dist/worker.js'
export const BUDGET_GZIP_BYTES = 320 * 1024

const inZod = (importer: string) => /[\\/]zod[\\/]/.test(importer)

const zodUnusedLeftOut: Plugin = {
  name: 'zod-unused-left-out',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) => (inZod(args.importer) ? { path: args.path, namespace: 'zod-locales' } : undefined))
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, () => ({
      contents: 'export { default as en } from "zod/v4/locales/en.js"',
      resolveDir: process.cwd(),
    }))
    b.onResolve({ filter: LEFT_OUT }, (args) => (inZod(args.importer) ? { path: join(dirname(args.importer), args.path), namespace: 'zod-left-out' } : undefined))
    b.onLoad({ filter: /.*/, namespace: 'zod-left-out' }, (args) => ({ contents: leftOutModule(args.path) }))
  },
}

/** zod's modules the worker never runs (see the header). */
const LEFT_OUT = /\/(from-json-schema|to-json-schema|compile)\.js$/

/**
 * A module with the exports of zod's module at `path`, each throwing when used. What zod calls while building
 * a schema must still work: the `create…Method` factories make the (throwing) method, and the compiler's
 * INVALID is its symbol.
 */
function leftOutModule(path: string): string {
  const source = readFileSync(path, 'utf8')
  const names = new Set([...source.matchAll(/^export (?:const|function|class) ([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]!))
  for (const list of source.matchAll(/^export \{([^}]*)\}/gm)) for (const part of list[1]!.split(',')) if (part.trim()) names.add(part.trim().split(/\s+as\s+/).pop()!)
  const unavailable = `() => { throw new Error("this part of zod is left out of the worker bundle (scripts/build-worker.ts)") }`
  const value = (name: string) => {
    if (name === 'INVALID') return 'Symbol.for("zod.compile.invalid")'
    if (/^create\w*Method$/.test(name)) return `() => ${unavailable}`
    return unavailable
  }
  return [...names].map((name) => `export const ${name} = ${value(name)}`).join('\n')
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
