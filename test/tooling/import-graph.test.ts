import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { zodObjectImports } from '../../scripts/worker-bundle/zod-imports.js'

// The layering rule of docs/ARCHITECTURE.md, over every import in src (type-only ones too: they couple the code as much).
const SRC = resolve(import.meta.dirname, '../../src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** Each file of src (relative to it) and the files of src it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sourceFiles(SRC)) {
    const imported = ts
      .preProcessFile(readFileSync(file, 'utf8'), true, true)
      .importedFiles.map((i) => i.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => resolve(dirname(file), name.replace(/\.js$/, '.ts')))
      .filter((path) => path.startsWith(SRC + '/'))
      .map((path) => relative(SRC, path))
    graph.set(relative(SRC, file), imported)
  }
  return graph
}

/** The import cycles: strongly connected groups of more than one file, or a file importing itself (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (file: string) => {
    index.set(file, next)
    low.set(file, next++)
    stack.push(file)
    onStack.add(file)
    for (const to of graph.get(file) ?? []) {
      if (!index.has(to)) {
        visit(to)
        low.set(file, Math.min(low.get(file)!, low.get(to)!))
      } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!))
    }
    if (low.get(file) !== index.get(file)) return
    const group: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      group.push(member)
    } while (member !== file)
    if (group.length > 1 || graph.get(file)?.includes(file)) found.push(group.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return found
}

/** Leaf modules of src/ that import nothing of the app, which every layer may use. */
const LEAVES = new Set(['memoize.ts', 'ip-address.ts'])

/** What each lower layer may import: its own folder and the layers below it. */
const LAYERS: { folder: string; mayImport: (path: string) => boolean }[] = [
  { folder: 'core/', mayImport: (path) => path.startsWith('core/') || LEAVES.has(path) },
  { folder: 'http/', mayImport: (path) => path.startsWith('core/') || path.startsWith('http/') || path === 'db.ts' || LEAVES.has(path) },
  { folder: 'evaluation/', mayImport: (path) => path.startsWith('evaluation/') || LEAVES.has(path) },
]

describe('the import graph of src', () => {
  const graph = importGraph()

  it('sees the files it should (a check over nothing passes)', () => {
    expect(graph.size).toBeGreaterThan(100)
    expect(graph.get('app.ts')).toContain('http/openapi.ts')
  })

  it('has no import cycle', () => {
    expect(cycles(graph)).toEqual([])
  })

  it.each(LAYERS)('keeps $folder from importing the features above it', ({ folder, mayImport }) => {
    const crossings = [...graph].flatMap(([file, imports]) => (file.startsWith(folder) ? imports.filter((to) => !mayImport(to)).map((to) => `${file} -> ${to}`) : []))
    expect(crossings).toEqual([])
  })

  it("takes zod's schemas from http/zod.ts, as a namespace (zod's `z` object keeps all of zod in the worker bundle)", () => {
    const zObjectImports = sourceFiles(SRC).flatMap((file) => zodObjectImports(readFileSync(file, 'utf8'), file).map((statement) => `${relative(SRC, file)}: ${statement}`))
    expect(zObjectImports).toEqual([])
  })

  it('finds a cycle and a crossing when there is one', () => {
    const bad = new Map([
      ['a/x.ts', ['b/y.ts']],
      ['b/y.ts', ['a/x.ts']],
      ['c/z.ts', []],
    ])
    expect(cycles(bad)).toEqual([['a/x.ts', 'b/y.ts']])
  })
})
