// The worker bundle leaves out what our sources say only for the OpenAPI document, which the worker does not make
// (it serves the one made at build time: scripts/build-worker.ts). Done on the syntax tree (TypeScript's parser),
// never on the text, and only where the runtime provably reads nothing:
// - in the route definitions, the first argument of `createRoute` (imported from @hono/zod-openapi) and `adminRoute`
//   (from http/openapi.ts) when it is written as an object: its `summary`, `description`, `tags`, `operationId`,
//   `deprecated` and `responses` (the validators @hono/zod-openapi makes read only `request`; `method`, `path`,
//   `middleware`, `request` and the `x-` declarations stay), and in its `request.body` the `description` and the
//   `example(s)` of each media type;
// - a zod schema's `.openapi(…)`, whose arguments are a name and/or an object (names, descriptions, examples, path
//   parameter names): the worker's stand-in for zod-to-openapi (./zod-to-openapi.ts) makes it return the schema
//   unchanged, so the call is left out with its arguments. A router's `.openapi(route, handler)` takes a route
//   and a function, never a literal, and is never touched.
// - the indentation of the lines of SQL written in `sql` tagged templates (drizzle's): the statements are the same
//   to Postgres without it (a line's leading blanks are no token, and no statement of ours holds a string literal that
//   spans lines).
// - in the tables (`pgTable(name, columns, constraints)` of drizzle-orm/pg-core, in schema/), the constraints and
//   indexes (the third argument) and the columns' `.references(…)` (also of columns a function builds for several
//   tables: a chain that starts with a column builder of pg-core): only the migrations (drizzle-kit, from the
//   sources) read them; queries name their conflict targets and joins themselves.
// - module-level zod schemas are marked free of effects: in `const x = z.…(…)` (or a chain on another such constant of
//   the file), every call gets `/* @__PURE__ */`, so a schema that only a cut `responses` read is dropped by the
//   bundler with what it alone uses. Building a zod schema has no effect but on the schema (`.openapi(…)` is cut
//   above; a chain calling `.register(…)`, `.meta(…)` or `.describe(…)`, which write zod's global registry, is left as it is).
// What is left out is replaced by its line breaks, so the source map keeps every line where it was.
import { readFile } from 'node:fs/promises'
import type { Plugin } from 'esbuild'
import ts from 'typescript'

const ROUTE_FACTORIES: Record<string, RegExp> = { createRoute: /^@hono\/zod-openapi$/, adminRoute: /(^|\/)http\/openapi\.js$/ }
const DOCUMENTATION_OF_A_ROUTE = new Set(['summary', 'description', 'tags', 'operationId', 'deprecated', 'responses'])

interface Cut {
  start: number
  end: number
  /** Text put at `start` (nothing is cut then: `end` is `start`). */
  insert?: string
}

const PURE = '/* @__PURE__ */ '
const REGISTERING = new Set(['register', 'meta', 'describe'])

/** The identifier a call chain starts from (`z` in `z.object({…}).optional()`). */
function chainRoot(node: ts.Expression): ts.Identifier | undefined {
  let at: ts.Expression = node
  for (;;) {
    if (ts.isCallExpression(at)) at = at.expression
    else if (ts.isPropertyAccessExpression(at)) at = at.expression
    else if (ts.isParenthesizedExpression(at)) at = at.expression
    else return ts.isIdentifier(at) ? at : undefined
  }
}

/** Whether the module-level initializer builds a zod schema (see the header), from `z` or the file's other schemas. */
function isSchemaConstruction(initializer: ts.Expression, schemas: Set<string>): boolean {
  const root = chainRoot(initializer)
  if (!root || !(root.text === 'z' || schemas.has(root.text)) || !ts.isCallExpression(initializer)) return false
  let registers = false
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && REGISTERING.has(node.name.text)) registers = true
    if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) return
    ts.forEachChild(node, visit)
  }
  visit(initializer)
  return !registers
}

/** The `/* @__PURE__ *\/` marks of the file's module-level zod schemas (see the header). */
function pureSchemaMarks(file: ts.SourceFile): Cut[] {
  const marks: Cut[] = []
  const schemas = new Set<string>()
  for (const statement of file.statements) {
    if (!ts.isVariableStatement(statement) || !(statement.declarationList.flags & ts.NodeFlags.Const)) continue
    for (const declaration of statement.declarationList.declarations) {
      if (!ts.isIdentifier(declaration.name) || !declaration.initializer || !isSchemaConstruction(declaration.initializer, schemas)) continue
      schemas.add(declaration.name.text)
      const mark = (node: ts.Node): void => {
        if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) return
        if (ts.isCallExpression(node)) {
          const start = node.getStart(file)
          marks.push({ start, end: start, insert: PURE })
        }
        ts.forEachChild(node, mark)
      }
      mark(declaration.initializer)
    }
  }
  return marks
}

/** The names this file imports as route factories (`createRoute`, `adminRoute`, under whatever local name). */
function routeFactories(file: ts.SourceFile): Set<string> {
  const names = new Set<string>()
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue
    const bindings = statement.importClause?.namedBindings
    if (!bindings || !ts.isNamedImports(bindings) || statement.importClause?.isTypeOnly) continue
    for (const element of bindings.elements) {
      const imported = (element.propertyName ?? element.name).text
      if (ROUTE_FACTORIES[imported]?.test(statement.moduleSpecifier.text) && !element.isTypeOnly) names.add(element.name.text)
    }
  }
  return names
}

function nameOf(property: ts.ObjectLiteralElementLike): string | undefined {
  if (ts.isShorthandPropertyAssignment(property)) return property.name.text
  return ts.isPropertyAssignment(property) && (ts.isIdentifier(property.name) || ts.isStringLiteral(property.name)) ? property.name.text : undefined
}

const objectValue = (object: ts.ObjectLiteralExpression, name: string) => {
  const property = object.properties.find((p) => nameOf(p) === name)
  return property && ts.isPropertyAssignment(property) && ts.isObjectLiteralExpression(property.initializer) ? property.initializer : undefined
}

/** The cut of `property`, with the comma after it (the next token, past any comment). */
function propertyCut(property: ts.ObjectLiteralElementLike, file: ts.SourceFile, scanner: ts.Scanner): Cut {
  scanner.resetTokenState(property.end)
  const next = scanner.scan()
  return { start: property.getStart(file), end: next === ts.SyntaxKind.CommaToken ? scanner.getTokenEnd() : property.end }
}

/** Whether `call` is a zod schema's `.openapi(name?, metadata?)`: its arguments are literals, a name and/or an object. */
function isSchemaMetadata(call: ts.CallExpression): call is ts.CallExpression & { expression: ts.PropertyAccessExpression } {
  if (!ts.isPropertyAccessExpression(call.expression) || call.expression.name.text !== 'openapi') return false
  const [first, second, ...rest] = call.arguments
  const isName = (node: ts.Node) => ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)
  if (!first || rest.length > 0) return false
  if (second) return isName(first) && ts.isObjectLiteralExpression(second)
  return isName(first) || ts.isObjectLiteralExpression(first)
}

/** The cuts in a route definition's object (see the header). */
function routeCuts(config: ts.ObjectLiteralExpression, file: ts.SourceFile, scanner: ts.Scanner): { cuts: Cut[]; kept: ts.Node[] } {
  const cuts: Cut[] = []
  const kept: ts.Node[] = []
  for (const property of config.properties) {
    const name = nameOf(property)
    if (name !== undefined && DOCUMENTATION_OF_A_ROUTE.has(name)) cuts.push(propertyCut(property, file, scanner))
    else kept.push(property)
  }
  const body = objectValue(config, 'request') && objectValue(objectValue(config, 'request')!, 'body')
  if (body) {
    for (const property of body.properties) if (nameOf(property) === 'description') cuts.push(propertyCut(property, file, scanner))
    const content = objectValue(body, 'content')
    for (const mediaType of content?.properties ?? []) {
      if (!ts.isPropertyAssignment(mediaType) || !ts.isObjectLiteralExpression(mediaType.initializer)) continue
      const media = mediaType.initializer
      for (const property of media.properties) if (nameOf(property) === 'example' || nameOf(property) === 'examples') cuts.push(propertyCut(property, file, scanner))
    }
  }
  return { cuts, kept }
}

/** The names this file imports as drizzle's `pgTable`. */
function tableFactories(file: ts.SourceFile): Set<string> {
  return pgCoreImports(file, (name) => name === 'pgTable')
}

/** The names this file imports from drizzle-orm/pg-core whose own name `which` takes. */
function pgCoreImports(file: ts.SourceFile, which: (name: string) => boolean): Set<string> {
  const names = new Set<string>()
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier) || statement.moduleSpecifier.text !== 'drizzle-orm/pg-core') continue
    const bindings = statement.importClause?.namedBindings
    if (!bindings || !ts.isNamedImports(bindings)) continue
    for (const element of bindings.elements) if (which((element.propertyName ?? element.name).text) && !element.isTypeOnly) names.add(element.name.text)
  }
  return names
}

/** The cuts in a `pgTable(…)` call: its third argument, and the `.references(…)` of its columns (see the header). */
function tableCuts(call: ts.CallExpression): Cut[] {
  const cuts: Cut[] = []
  const [, columns, constraints] = call.arguments
  if (columns && constraints) cuts.push({ start: columns.end, end: constraints.end })
  if (!columns || !ts.isObjectLiteralExpression(columns)) return cuts
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'references') cuts.push({ start: node.expression.expression.end, end: node.end })
    ts.forEachChild(node, visit)
  }
  visit(columns)
  return cuts
}

/**
 * Whether `node` is `.references(…)` on a column built outside a table (columns a function shares between tables):
 * its chain starts with a call of a column builder of drizzle-orm/pg-core (`text('a').notNull().references(…)`).
 */
function isColumnReference(node: ts.Node, columnBuilders: Set<string>): node is ts.CallExpression & { expression: ts.PropertyAccessExpression } {
  if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression) || node.expression.name.text !== 'references') return false
  let at: ts.Expression = node.expression.expression
  while (ts.isCallExpression(at) && ts.isPropertyAccessExpression(at.expression)) at = at.expression.expression
  return ts.isCallExpression(at) && ts.isIdentifier(at.expression) && columnBuilders.has(at.expression.text)
}

/** `source` without its documentation (see the header); the same text when it has none. */
export function leaveOutDocumentation(source: string, fileName: string): string {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, source)
  const factories = routeFactories(file)
  const tables = tableFactories(file)
  const columnBuilders = pgCoreImports(file, (name) => name !== 'pgTable')
  const cuts: Cut[] = []
  const within = (node: ts.Node, cut: Cut) => node.getStart(file) >= cut.start && node.end <= cut.end
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && factories.has(node.expression.text) && node.arguments[0] && ts.isObjectLiteralExpression(node.arguments[0])) {
      const found = routeCuts(node.arguments[0], file, scanner)
      cuts.push(...found.cuts)
      // What is kept may hold schemas with `.openapi(…)`; what is cut is gone whole.
      for (const kept of found.kept) ts.forEachChild(kept, (child) => (found.cuts.some((cut) => within(child, cut)) ? undefined : visit(child)))
      return
    }
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && tables.has(node.expression.text)) {
      cuts.push(...tableCuts(node))
      return
    }
    if (isColumnReference(node, columnBuilders)) {
      cuts.push({ start: node.expression.expression.end, end: node.end })
      visit(node.expression.expression)
      return
    }
    if (ts.isTaggedTemplateExpression(node) && ts.isIdentifier(node.tag) && node.tag.text === 'sql') {
      const template = node.template
      const parts = ts.isNoSubstitutionTemplateLiteral(template) ? [template] : [template.head, ...template.templateSpans.map((span) => span.literal)]
      for (const part of parts) {
        const start = part.getStart(file)
        for (const indent of source.slice(start, part.end).matchAll(/\n([ \t]+)/g)) cuts.push({ start: start + indent.index + 1, end: start + indent.index + 1 + indent[1]!.length })
      }
    }
    if (ts.isCallExpression(node) && isSchemaMetadata(node)) {
      cuts.push({ start: node.expression.expression.end, end: node.end })
      visit(node.expression.expression)
      return
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  cuts.push(...pureSchemaMarks(file))
  if (cuts.length === 0) return source
  let result = ''
  let at = 0
  // Marks before cuts at one place, so a call whose `.openapi(…)` tail is cut keeps its mark.
  for (const cut of cuts.sort((a, b) => a.start - b.start || (a.insert ? -1 : 0) - (b.insert ? -1 : 0))) {
    if (cut.start < at) continue // inside a cut already made
    result += source.slice(at, cut.start) + (cut.insert ?? '') + source.slice(cut.start, cut.end).replace(/[^\n]/g, '')
    at = cut.end
  }
  return result + source.slice(at)
}

/** The esbuild plugin: our TypeScript sources (`src/`, `schema/`), each without its documentation. */
export const documentationLeftOut: Plugin = {
  name: 'documentation-left-out',
  setup(b) {
    b.onLoad({ filter: /[\\/](src|schema)[\\/].*\.ts$/ }, async (args) => {
      if (args.path.includes('node_modules')) return undefined
      return { contents: leaveOutDocumentation(await readFile(args.path, 'utf8'), args.path), loader: 'ts' }
    })
  },
}
