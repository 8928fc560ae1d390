// The app takes zod as `import * as z from '…/http/zod.js'` (see src/http/zod.ts). zod's `z` object, imported from
// zod or re-exported by @hono/zod-openapi, holds all of zod: a file importing it keeps every part of zod in the worker
// bundle, and in the worker build @hono/zod-openapi's `z` is only the class its stand-in needs (scripts/build-worker.ts).
import { readFile } from 'node:fs/promises'
import { relative } from 'node:path'
import type { Plugin } from 'esbuild'
import ts from 'typescript'

/** The import statements of `source` that take zod's `z` object (or zod's default or namespace) from zod or @hono/zod-openapi. */
export function zodObjectImports(source: string, fileName: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest)
  return file.statements.flatMap((statement) => {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier) || statement.importClause?.isTypeOnly) return []
    if (!['zod', '@hono/zod-openapi'].includes(statement.moduleSpecifier.text)) return []
    const bindings = statement.importClause?.namedBindings
    const named = bindings && ts.isNamedImports(bindings) ? bindings.elements.filter((e) => !e.isTypeOnly).map((e) => (e.propertyName ?? e.name).text) : []
    const whole = statement.importClause?.name !== undefined || (bindings !== undefined && ts.isNamespaceImport(bindings))
    return named.includes('z') || whole ? [statement.getText(file)] : []
  })
}

/** Fails the worker build where one of our sources imports zod's `z` object (it would be the stand-in's one class there). */
export const zodObjectRefused: Plugin = {
  name: 'zod-object-refused',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => {
      if (args.path.includes('node_modules')) return undefined
      const source = await readFile(args.path, 'utf8')
      const found = source.includes('zod') ? zodObjectImports(source, args.path) : []
      if (found.length === 0) return undefined
      return { errors: found.map((text) => ({ text: `${relative(process.cwd(), args.path)}: ${text}: import zod as \`import * as z from '…/http/zod.js'\` (see src/http/zod.ts)` })) }
    })
  },
}
