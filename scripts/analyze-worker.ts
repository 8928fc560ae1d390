// What takes the space in the worker bundle (`npm run build:analyze`): builds it as scripts/build-worker.ts does, with
// esbuild's metafile and source map, and prints its top contributors, by package (and our own folders) and by file.
// Each row's bytes are the bundle's bytes that the source map attributes to it (minified), and "gzip saved" is what
// leaving it out would save of the gzipped bundle: the whole bundle gzipped, less the bundle without its bytes
// gzipped (gzip shares a dictionary across the file, so a part compressed alone would overstate it).
//   --top N        rows per table (default 40)
//   --why PATTERN  the chain of imports that brings each module matching PATTERN into the bundle
import { gzipSync } from 'node:zlib'
import { decode } from '@jridgewell/sourcemap-codec'
import { readFile } from 'node:fs/promises'
import { build, type Metafile, type Plugin } from 'esbuild'
import { BUDGET_GZIP_BYTES, workerBuildOptions } from './build-worker.js'

/**
 * Packages that ship source maps (drizzle, hono) would be attributed to their own sources (`src/…` paths outside the
 * package); their `sourceMappingURL` comment is dropped here so their bytes map to the files the bundle imports.
 * Comments never reach the minified output, so the bundle is the same.
 */
const packagesMappedToThemselves: Plugin = {
  name: 'packages-mapped-to-themselves',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/].*\.(c|m)?js$/ }, async (args) => ({
      contents: (await readFile(args.path, 'utf8')).replace(/^\/\/# sourceMappingURL=.*$/gm, ''),
      loader: 'js',
    }))
  },
}

/** Paths as the tables show them: our files from the project root, a package's from its node_modules folder. */
const shortPath = (path: string) => path.replace(/^[^:]*:/, '').replace(/^.*?(node_modules\/)/, '$1').replace(/^(\.\.\/)+/, '').replace(/^\/.*?\/wt-[^/]+\//, '')

/** A row of the tables: a package (a few split by subfolder), one of our folders, or a file. */
export function groupOf(path: string): string {
  const inPackage = path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/)
  if (!inPackage) {
    const [top, second] = path.replace(/^[^:]*:/, '').split('/')
    return top === 'src' && second && !second.includes('.') ? `src/${second}/` : second ? `${top}/${second}` : (top ?? path)
  }
  const [, name, rest] = inPackage
  // Split the packages whose parts are chosen separately: zod (core, classic, locales), drizzle (its dialects).
  if (name === 'zod') return `zod/${rest!.replace(/^v4\//, '').split('/')[0]}`
  if (name === 'drizzle-orm') return rest!.includes('/') ? `drizzle-orm/${rest!.split('/')[0]}` : 'drizzle-orm'
  return name!
}

export interface Contributor {
  name: string
  bytes: number
  gzipSaved: number
}

export interface BundleAnalysis {
  bytes: number
  gzipBytes: number
  groups: Contributor[]
  files: Contributor[]
  metafile: Metafile
}

/** Builds the worker in memory and attributes its bytes to source files through the source map, grouped by `group`. */
export async function analyzeWorker(group: (path: string) => string = groupOf): Promise<BundleAnalysis> {
  // The document's path is a name of the same length as the one the build gives it (the bundle is measured, not run).
  // Built as one file, the modules it loads lazily included (one source map to attribute): `npm run build` says how
  // much of it an isolate loads at start, which the budget counts.
  const options = workerBuildOptions('dist/worker.js', '/docs/openapi.0000000000000000.json', false)
  const result = await build({ ...options, plugins: [...(options.plugins ?? []), packagesMappedToThemselves], metafile: true, write: false })
  const js = result.outputFiles.find((f) => f.path.endsWith('.js'))!
  const map = JSON.parse(result.outputFiles.find((f) => f.path.endsWith('.js.map'))!.text) as { sources: string[]; mappings: string }
  const lines = js.text.split('\n')
  // Per source file, the [start, end) ranges of the output it produced, in string offsets.
  const ranges = new Map<string, [number, number][]>()
  let lineStart = 0
  decode(map.mappings).forEach((segments, line) => {
    const text = lines[line] ?? ''
    segments.forEach((segment, i) => {
      const end = i + 1 < segments.length ? segments[i + 1]![0] : text.length
      const source = segment.length > 1 ? shortPath(map.sources[segment[1]!]!) : '(esbuild: unmapped)'
      if (end > segment[0]) (ranges.get(source) ?? ranges.set(source, []).get(source)!).push([lineStart + segment[0], lineStart + end])
    })
    lineStart += text.length + 1
  })
  const total = gzipSync(js.text).length
  const byteLength = (source: [number, number][]) => source.reduce((sum, [start, end]) => sum + Buffer.byteLength(js.text.slice(start, end)), 0)
  const gzipWithout = (left: [number, number][]) => {
    const sorted = [...left].sort((a, b) => a[0] - b[0])
    let kept = ''
    let at = 0
    for (const [start, end] of sorted) {
      kept += js.text.slice(at, start)
      at = end
    }
    return gzipSync(kept + js.text.slice(at)).length
  }
  const contributors = (keyOf: (source: string) => string, measureTop: number) => {
    const merged = new Map<string, [number, number][]>()
    for (const [source, list] of ranges) (merged.get(keyOf(source)) ?? merged.set(keyOf(source), []).get(keyOf(source))!).push(...list)
    const rows = [...merged].map(([name, list]) => ({ name, list, bytes: byteLength(list), gzipSaved: 0 })).sort((a, b) => b.bytes - a.bytes)
    for (const row of rows.slice(0, measureTop)) row.gzipSaved = total - gzipWithout(row.list)
    return rows.map(({ name, bytes, gzipSaved }) => ({ name, bytes, gzipSaved }))
  }
  return { bytes: js.contents.length, gzipBytes: total, groups: contributors(group, 80), files: contributors((s) => s, 60), metafile: result.metafile }
}

/** How `target` came into the bundle: the shortest chain of imports from the entry. */
function importChain(metafile: Metafile, target: string): string[] {
  const entry = 'src/worker.ts'
  const from = new Map<string, string>([[entry, '']])
  const queue = [entry]
  while (queue.length > 0) {
    const at = queue.shift()!
    if (at === target) break
    for (const { path } of metafile.inputs[at]?.imports ?? []) {
      if (from.has(path) || !(path in metafile.inputs)) continue
      from.set(path, at)
      queue.push(path)
    }
  }
  const chain: string[] = []
  for (let at: string | undefined = target; at; at = from.get(at)) chain.unshift(at)
  return from.has(target) ? chain : []
}

if (process.argv[1]?.endsWith('analyze-worker.ts')) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name)
    return i > 0 ? process.argv[i + 1] : undefined
  }
  const top = Number(arg('--top') ?? 40)
  const why = arg('--why')
  const analysis = await analyzeWorker()
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`.padStart(10)
  console.log(`worker bundle as one file (its lazily loaded modules included): ${kib(analysis.bytes).trim()} minified, ${kib(analysis.gzipBytes).trim()} gzipped (the budget, ${kib(BUDGET_GZIP_BYTES).trim()}, counts what it loads at start: npm run build)\n`)
  const table = (title: string, rows: Contributor[]) => {
    console.log(`${title}\n${'minified'.padStart(10)} ${'gzip saved'.padStart(10)}  (what leaving it out saves of the gzipped bundle)`)
    for (const row of rows.slice(0, top)) console.log(`${kib(row.bytes)} ${row.gzipSaved ? kib(row.gzipSaved) : ''.padStart(10)}  ${row.name}`)
    console.log()
  }
  table('By package and by our own folders', analysis.groups)
  table('By file', analysis.files)
  if (why) {
    for (const path of Object.keys(analysis.metafile.inputs).filter((p) => p.includes(why))) console.log(`${path}\n  ${importChain(analysis.metafile, path).join('\n  → ') || '(not reached from src/worker.ts)'}\n`)
  }
}
