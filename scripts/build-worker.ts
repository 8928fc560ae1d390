// Bundles the worker (src/worker.ts → dist/worker.js) for wrangler, which runs this as its build step
// (wrangler.toml [build]) before `wrangler dev`, `deploy` and `versions upload`. It prints the size,
// gzipped, against the budget (`npm run build:analyze` says what takes it: scripts/analyze-worker.ts).
//
// The OpenAPI document is made here, from the routes, by the app itself (as the Node server makes it), and
// written to the worker's static assets (wrangler.toml [assets], next to the web console), where the worker
// reads it for `/docs/openapi.json`. So the bundle leaves out what only the document needs: the generator
// (@asteasolutions/zod-to-openapi, replaced by scripts/worker-bundle/zod-to-openapi.ts, which keeps what routing
// and validation need) and what our routes and schemas say for it (scripts/worker-bundle/documentation-left-out.ts).
//
// zod is shaken to the parts the app uses (it imports zod as a namespace: src/http/zod.ts). Its schemas still
// reference a few parts nothing in the worker runs, which are left out: every one of zod's ~250 message locales but
// English, `z.fromJSONSchema` (schemas from JSON Schema), `z.toJSONSchema` and the JSON Schema processors and
// generator (only the OpenAPI document used them), and zod's JIT compiler of parsers (it builds code with
// `new Function`, which Workers refuse, so zod parses without it there). Calling any of them throws.
//
// What only a lazy `await import()` reaches (rarely used routes' code: the instance state's export and import, the
// flags' export, validation and import) is split into modules of their own under dist/chunks/, which wrangler uploads
// with the entry (wrangler.toml: `find_additional_modules`, `rules`) and workerd loads when first imported. The budget
// counts what an isolate loads at start: the entry and the modules it imports statically.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { gzipSync } from 'node:zlib'
import { build, type BuildOptions, type Plugin } from 'esbuild'
import { documentationLeftOut } from './worker-bundle/documentation-left-out.js'
import { zodObjectRefused } from './worker-bundle/zod-imports.js'

const OUT = 'dist/worker.js'
/** wrangler.toml's [assets] directory: the web console's build, and the OpenAPI document this build adds to it. */
const ASSETS = 'console/dist'
/** Where in the assets the document goes: under `/docs/`, which wrangler.toml's `run_worker_first` sends to the worker, so only the worker serves it. */
const DOCUMENT_FOLDER = 'docs'
// 282 → 290 KiB: single sign-on brings its OpenID Connect client (oauth4webapi, about 9 KiB gzipped), which must run
// at the edge, and invite links their routes: 267 → 282 KiB measured with both.
// 290 → 300 KiB: service accounts, API token expiry, signals and action sets (whose runs must run at the edge, after
// the signal's answer): 282 → 294 KiB measured with them.
// 300 → 310 KiB: single sign-on's group sync reads the groups at a JSONPath (jsonpath-rfc9535, about 9.5 KiB gzipped),
// which must run at the edge, with the sign-in: 294 → 306 KiB measured with it and single sign-out.
// 310 → 320 KiB: Unleash Edge's upstream routes and SDK impact metrics, then SDK deltas and streams (with the Durable
// Object's stream hub), which must run at the edge: 306 → 312.7 KiB measured with them. Workers take scripts of up to
// 3 MiB (free) / 10 MiB (paid) gzipped; this budget is ours, to keep an isolate's start-up (parsing, building the
// routes) short, and each raise says what paid for it.
// 320 → 326 KiB, TEMPORARY: the rest of Unleash's admin API, OpenFeature's OFREP routes, maintenance mode and the
// import's and evaluation meter's checks, merged together, measure 325.6 KiB (each fitted alone, but made its room
// with the same replacements: murmurhash3js, fast-json-patch, SQL indentation); 328.0 KiB after the next merges.
// 326 → 320 KiB: group sync's JSONPath read by our own reader, RFC 9535 without filters (src/auth-settings/json-path.ts,
// -8.0 KiB), and our own IP address reader for ipaddr.js (src/ip-address.ts, -1.7 KiB): 328.0 → 318.4 KiB.
// Next candidates: src/state/plan.ts (8.6 KiB), the change-request store (6.6 KiB), mustache (2.6 KiB).
// 320 → 323 KiB, TEMPORARY: this round's merges (instance statistics, readiness, the metrics hook, the REGEX/CIDR
// acceptance and its warnings, the visibility fixes, CORS origins, the last-Admin guard) measured 322.1 KiB.
// 323 → 320 KiB: module-level zod schemas marked free of effects, so those only a cut `responses` read go (-4.0 KiB);
// the tables' constraints, indexes and foreign keys, which only the migrations read, left out (-1.7 KiB); our own
// Mustache renderer for webhook body templates instead of mustache.js (src/integrations/mustache.ts, -1.5 KiB):
// 322.3 → 315.2 KiB. Next candidates: src/state/plan.ts (8.9 KiB), the change-request store (6.5 KiB).
// 320 → 326 KiB, TEMPORARY: round six's merges (the rest of Unleash's admin API — feedback, splash, unknown flags,
// project insights, personal dashboard —, per-day metrics, the change-request search, the segment search, the SDK
// hot path's route memo, claimed work handed back, the e-mail and tag rules) measured 325.2 KiB; each branch fitted
// the 1.9 KiB left alone. Next: bring it back to 320 (src/state/plan.ts 8.9 KiB, the change-request store 6.5 KiB).
// 326 → 320 KiB: the instance state's export and import (its plan: 8.9 KiB) and the flags' export, validation and import
// are loaded when first used, from modules of their own (esbuild splits what only an `await import()` reaches), so an
// isolate's start-up leaves them out: 325.3 → 307.6 KiB at start, 335.4 KiB in all (each module gzipped alone).
// The budget counts the entry and the modules it imports statically: what an isolate loads for its first request.
export const BUDGET_GZIP_BYTES = 320 * 1024
/** Every module of the worker, the lazily loaded ones too (each gzipped alone): what a deployment uploads. */
export const BUDGET_TOTAL_GZIP_BYTES = 345 * 1024

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
const LEFT_OUT = /\/(from-json-schema|to-json-schema|json-schema-processors|json-schema-generator|compile)\.js$/

/**
 * The stand-in for the OpenAPI generator (see the header). And the zod @hono/zod-openapi imports: it hands zod's
 * whole `z` object to the generator's `extendZodWithOpenApi`, which keeps every part of zod in the bundle, when the
 * stand-in only needs `ZodType` (to give its schemas `.openapi`). The `z` it re-exports is then that one class: the
 * app takes zod from src/http/zod.ts instead, and the build fails where it does not (./worker-bundle/zod-imports.ts).
 */
const openApiGeneratorLeftOut: Plugin = {
  name: 'openapi-generator-left-out',
  setup(b) {
    b.onResolve({ filter: /^@asteasolutions\/zod-to-openapi$/ }, () => ({ path: join(process.cwd(), 'scripts/worker-bundle/zod-to-openapi.ts') }))
    b.onResolve({ filter: /^zod$/ }, (args) => (/[\\/]@hono[\\/]zod-openapi[\\/]/.test(args.importer) ? { path: 'zod', namespace: 'zod-for-zod-openapi' } : undefined))
    b.onLoad({ filter: /.*/, namespace: 'zod-for-zod-openapi' }, () => ({ contents: 'import { ZodType } from "zod"\nexport const z = { ZodType }', resolveDir: process.cwd() }))
  },
}

/**
 * The OpenAPI document, exactly as the app serves it at `/docs/openapi.json` when it makes it from its routes
 * (the worker's own settings change nothing in it; test/workerd/worker.test.ts compares the two).
 */
export async function openApiDocument(): Promise<string> {
  const { createApp } = await import('../src/app.js')
  const noDatabase = new Proxy({}, {
    get() {
      throw new Error('the OpenAPI document is made without a database')
    },
  })
  const response = await createApp({ db: () => noDatabase as never }).request('/docs/openapi.json')
  if (response.status !== 200) throw new Error(`/docs/openapi.json answered ${response.status}: ${await response.text()}`)
  return response.text()
}

/**
 * Writes the document into the assets under a name made of its hash (a worker only ever reads the document made
 * with it) and removes those older builds left; returns its path in the assets. Written whole, then renamed, so
 * a build running alongside (the workerd tests build twice at once) never reads half of it.
 */
function writeDocumentAsset(document: string, assetsDir: string): string {
  const name = `openapi.${createHash('sha256').update(document).digest('hex').slice(0, 16)}.json`
  const dir = join(assetsDir, DOCUMENT_FOLDER)
  mkdirSync(dir, { recursive: true })
  const temporary = join(dir, `.${name}.${process.pid}`)
  writeFileSync(temporary, document)
  renameSync(temporary, join(dir, name))
  for (const file of readdirSync(dir)) if (/^openapi\.[0-9a-f]{16}\.json$/.test(file) && file !== name) rmSync(join(dir, file), { force: true })
  return `/${DOCUMENT_FOLDER}/${name}`
}

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

/** Where the build puts the modules the worker imports lazily, next to its entry. */
const CHUNKS = 'chunks'
/** How old a lazy module no build wrote must be before a build removes it (builds running alongside keep theirs). */
const STALE_AFTER_MS = 15 * 60_000

/**
 * esbuild's options for the worker bundle (also used by scripts/analyze-worker.ts, which measures it);
 * `documentPath`: where the assets hold the OpenAPI document. The entry is written to `outfile`; with `split`
 * (the build's default) what only a lazy `await import()` reaches goes to modules of its own under `chunks/`
 * next to it (wrangler.toml's `rules` upload them with the entry), loaded when first used.
 */
export function workerBuildOptions(outfile: string, documentPath: string, split = true): BuildOptions {
  return {
    entryPoints: { [basename(outfile).replace(/\.js$/, '')]: 'src/worker.ts' },
    outdir: dirname(outfile),
    ...(split ? { splitting: true, chunkNames: `${CHUNKS}/[name]-[hash]` } : {}),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    minify: true,
    sourcemap: true,
    legalComments: 'none',
    plugins: [zodObjectRefused, documentationLeftOut, zodUnusedLeftOut, openApiGeneratorLeftOut],
    define: { FLAGPOST_OPENAPI_DOCUMENT: JSON.stringify(documentPath) },
    logLevel: 'warning',
  }
}

export interface WorkerSize {
  /** The entry and the modules it imports statically: what an isolate loads to answer its first request. */
  bytes: number
  gzipBytes: number
  /** Every module of the worker, those loaded lazily (`await import()`) included, each gzipped alone. */
  totalGzipBytes: number
  /** The modules loaded lazily, by file name, gzipped. */
  lazy: Record<string, number>
}

/** Builds the bundle into `outfile` (and its lazy modules next to it) and its OpenAPI document into `assetsDir`. */
export async function buildWorker(outfile = OUT, assetsDir = ASSETS): Promise<WorkerSize> {
  const documentPath = writeDocumentAsset(await openApiDocument(), assetsDir)
  const outdir = dirname(outfile)
  const { metafile, outputFiles } = await build({ ...workerBuildOptions(outfile, documentPath), metafile: true, write: false })
  // Each file written whole, then renamed, the entry last (builds run alongside: the workerd tests build at once, and
  // wrangler collects the modules of the folder); then the lazy modules of earlier builds go, or wrangler would
  // upload them too. Modules are named by their content's hash, so a build alongside of the same sources keeps its own.
  const entryFile = resolve(outfile)
  for (const file of [...outputFiles].sort((a, b) => Number(a.path === entryFile) - Number(b.path === entryFile))) {
    mkdirSync(dirname(file.path), { recursive: true })
    const temporary = `${file.path}.${process.pid}.partial`
    writeFileSync(temporary, file.contents)
    renameSync(temporary, file.path)
  }
  // Only modules older than STALE_AFTER_MS go: a build alongside (another workerd test file's, or `wrangler dev`'s of
  // other sources) may have just written modules its entry needs, and wrangler may be collecting them.
  const written = new Set(outputFiles.map((file) => file.path))
  const chunks = resolve(outdir, CHUNKS)
  const staleBefore = Date.now() - STALE_AFTER_MS
  if (existsSync(chunks)) {
    for (const name of readdirSync(chunks)) {
      const path = join(chunks, name)
      if (/\.js(\.map)?$/.test(name) && !written.has(path) && (statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Infinity) < staleBefore) rmSync(path, { force: true })
    }
  }
  const outputs = metafile.outputs
  const entry = Object.keys(outputs).find((path) => outputs[path]!.entryPoint === 'src/worker.ts')!
  const atStart = new Set([entry])
  for (const path of atStart) for (const i of outputs[path]!.imports) if (i.kind === 'import-statement' && i.path in outputs) atStart.add(i.path)
  const size = { bytes: 0, gzipBytes: 0, totalGzipBytes: 0, lazy: {} as Record<string, number> }
  for (const path of Object.keys(outputs).filter((p) => p.endsWith('.js'))) {
    const code = outputFiles.find((file) => file.path === resolve(path))!.contents
    const gzipBytes = gzipSync(code).length
    size.totalGzipBytes += gzipBytes
    if (atStart.has(path)) {
      size.bytes += code.length
      size.gzipBytes += gzipBytes
    } else size.lazy[basename(path)] = gzipBytes
  }
  return size
}

if (process.argv[1]?.endsWith('build-worker.ts')) {
  const { bytes, gzipBytes, totalGzipBytes, lazy } = await buildWorker()
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`
  console.log(`${OUT} and what it imports at start: ${kib(bytes)}, ${kib(gzipBytes)} gzipped (budget ${kib(BUDGET_GZIP_BYTES)})`)
  console.log(`loaded lazily: ${Object.entries(lazy).map(([name, n]) => `${name} ${kib(n)}`).join(', ') || 'nothing'}; in all ${kib(totalGzipBytes)} gzipped`)
  // The budget is enforced by test/tooling/worker-bundle.test.ts; here it only warns, so `wrangler dev` still starts.
  if (gzipBytes > BUDGET_GZIP_BYTES) console.warn('Warning: the worker bundle is over its budget.')
}
