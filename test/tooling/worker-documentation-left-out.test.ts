// The worker bundle leaves out what the sources say only for the OpenAPI document (scripts/worker-bundle/
// documentation-left-out.ts): it cuts exactly that, and the routes it leaves validate as the sources' do.
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build } from 'esbuild'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { documentationLeftOut, leaveOutDocumentation } from '../../scripts/worker-bundle/documentation-left-out.js'
import { createApp } from '../../src/app.js'

let dir: string | undefined
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

const marked = (source: string) => leaveOutDocumentation(source, 'routes.ts')
/** The cut without the pure marks of module-level schemas (tested on their own below). */
const cut = (source: string) => marked(source).replaceAll('/* @__PURE__ */ ', '')
/** The code without the blank lines a cut leaves, and with one space wherever there was any. */
const squeezed = (source: string) => source.replace(/\s+/g, ' ').trim()

describe('leaving the documentation out of a source', () => {
  it("cuts a route's summary, description, tags, operationId, deprecated and responses, and what its body and media types say for the document", () => {
    const source = `import { adminRoute, jsonContent } from '../http/openapi.js'
const tags = ['Features']
export const route = adminRoute({
  method: 'post',
  'x-change-requests': 'guarded',
  'x-permission': { name: 'UPDATE_FEATURE', project: 'projectId' },
  path: '/api/admin/projects/{projectId}/features',
  operationId: 'createFeature',
  tags,
  summary: 'Add a new feature flag',
  description:
    'Creates a flag. ' +
    'Emits feature-created.',
  deprecated: true,
  middleware: [guard],
  request: { params: projectIdParam, body: { description: 'The flag', required: true, content: { 'application/json': { schema: CreateFeatureSchema, example: { name: 'x' }, examples: {} } } } },
  responses: { 201: { description: 'The new flag', content: jsonContent(FeatureSchema) }, ...pickErrors(400, 401) },
})`
    const result = cut(source)
    expect(result.split('\n')).toHaveLength(source.split('\n').length)
    expect(squeezed(result)).toBe(
      squeezed(`import { adminRoute, jsonContent } from '../http/openapi.js'
const tags = ['Features']
export const route = adminRoute({
  method: 'post',
  'x-change-requests': 'guarded',
  'x-permission': { name: 'UPDATE_FEATURE', project: 'projectId' },
  path: '/api/admin/projects/{projectId}/features',
  middleware: [guard],
  request: { params: projectIdParam, body: { required: true, content: { 'application/json': { schema: CreateFeatureSchema, } } } },
})`),
    )
  })

  it("cuts @hono/zod-openapi's createRoute too, under the name it is imported as", () => {
    const source = `import { createRoute as route, z } from '@hono/zod-openapi'
const health = route({ method: 'get', path: '/health', summary: 'Health', responses: { 200: { description: 'Up' } } })`
    expect(squeezed(cut(source))).toBe(squeezed(`import { createRoute as route, z } from '@hono/zod-openapi'
const health = route({ method: 'get', path: '/health', })`))
  })

  it("cuts a schema's .openapi(name), .openapi(metadata) and .openapi(name, metadata), nested and chained", () => {
    const source = `const Id = z.object({
  id: z.string().openapi({ param: { name: 'id', in: 'path' }, description: 'The id' }),
  limit: z.string().regex(/^\\d+$/, 'a number').openapi({ description: \`Default \${fallback}\` }).optional().openapi('Limit'),
  list: z.array(z.string().openapi({ example: 'a' })).openapi('List', { description: 'Names' }),
}).openapi('IdParam')`
    expect(squeezed(cut(source))).toBe(
      squeezed(`const Id = z.object({
  id: z.string(),
  limit: z.string().regex(/^\\d+$/, 'a number').optional(),
  list: z.array(z.string()),
})`),
    )
  })

  it('marks the calls of module-level zod schemas pure, and nothing else', () => {
    const source = `const A = z.object({ id: z.string() }).openapi('A')
const B = A.extend({ n: z.number() })
const C = z.string().describe('kept as it is')
const d = makeThing(z.string())
function f() { const E = z.string(); return E }`
    expect(squeezed(marked(source))).toBe(
      squeezed(`const A = /* @__PURE__ */ /* @__PURE__ */ z.object({ id: /* @__PURE__ */ z.string() })
const B = /* @__PURE__ */ A.extend({ n: /* @__PURE__ */ z.number() })
const C = z.string().describe('kept as it is')
const d = makeThing(z.string())
function f() { const E = z.string(); return E }`),
    )
  })

  it("cuts a table's constraints and its columns' references (shared columns too), and no other call", () => {
    const source = `import { index, pgTable, text } from 'drizzle-orm/pg-core'
export const t = pgTable('t', { a: text('a').notNull().references(() => other.id, { onDelete: 'cascade' }), b: text('b') }, (t) => [index('i').on(t.a)])
export const u = notATable('u', { a: x.references(y) }, z)
const shared = () => ({ c: text('c').notNull().references(() => other.id), d: x.y().references(z) })`
    expect(squeezed(cut(source).replace(/\s+([,)])/g, '$1'))).toBe(
      squeezed(`import { index, pgTable, text } from 'drizzle-orm/pg-core'
export const t = pgTable('t', { a: text('a').notNull(), b: text('b') })
export const u = notATable('u', { a: x.references(y) }, z)
const shared = () => ({ c: text('c').notNull(), d: x.y().references(z) })`),
    )
  })

  it('leaves alone what the runtime reads: routers, data with the same names, factories not imported from the route modules', () => {
    const source = `import { createRouter } from '../http/openapi.js'
function createRoute(config) { return config }
const local = createRoute({ method: 'get', path: '/x', description: 'kept', responses: {} })
const adminRoute = (c) => c
const alsoLocal = adminRoute({ summary: 'kept too' })
export const routes = createRouter()
  .openapi(getRoute, async (c) => c.json({ description: c.var.description, summary: 'a' }, 200))
  .openapi(createRoute, handler)
  .openapi({ ...getRoute }, (c) => c.json({}))
const row = { name: input.name, description: input.description ?? null, tags: [], responses: 3 }
const named = thing.openapi(variableName)
const template = schema.openapi(\`Name\${suffix}\`)`
    expect(cut(source)).toBe(source)
  })

  it('cuts the indentation of the lines of sql tagged templates, nothing else of them, and no other template', () => {
    const source = "const q = sql`select a,\n      b from t\n  where x = ${value} and\n    y = ' two  spaces '`\nconst other = `keep\n    this`\n"
    const left = cut(source)
    expect(left).toBe("const q = sql`select a,\nb from t\nwhere x = ${value} and\ny = ' two  spaces '`\nconst other = `keep\n    this`\n")
    expect(left.split('\n')).toHaveLength(source.split('\n').length)
  })

  it('returns a source without any of it unchanged', () => {
    const source = "export const x = 1 // summary: 'no'\n"
    expect(cut(source)).toBe(source)
  })
})

/** The first place where `a` and `b` differ (zod schemas by their definitions), or undefined. */
function difference(a: unknown, b: unknown, at = '', seen = new Set<unknown>()): string | undefined {
  if (typeof a === 'function' || typeof b === 'function') {
    // Functions (refinements, transforms, middleware) are the same code, bundled apart: compared by kind and arity.
    return typeof a === typeof b && (a as () => void).length === (b as () => void).length ? undefined : at
  }
  if (a instanceof RegExp || b instanceof RegExp) return String(a) === String(b) ? undefined : at
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return Object.is(a, b) ? undefined : at
  if (seen.has(a)) return undefined
  seen.add(a)
  const zodA = (a as { _zod?: { def: unknown } })._zod
  const zodB = (b as { _zod?: { def: unknown } })._zod
  if (zodA || zodB) return zodA && zodB ? difference(zodA.def, zodB.def, `${at}._zod.def`, seen) : at
  if (Array.isArray(a) !== Array.isArray(b)) return at
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  for (const key of keys) {
    const found = difference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${at}.${key}`, seen)
    if (found !== undefined) return found
  }
  return undefined
}

/** The routes an app registered, by method and path, as @hono/zod-openapi's validators see them. */
function routesOf(app: { openAPIRegistry: { definitions: { type: string; route?: Record<string, unknown> }[] } }) {
  const routes = new Map<string, Record<string, unknown>>()
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type === 'route') routes.set(`${String(definition.route!.method)} ${String(definition.route!.path)}`, definition.route!)
  }
  return routes
}

/** What the app runs for each request, in order: every middleware, validator and handler, with its method and path. */
const handlersOf = (app: { routes: { method: string; path: string; handler: (...args: never[]) => unknown }[] }) =>
  app.routes.map(({ method, path, handler }) => `${method} ${path}: ${handler.constructor.name}(${handler.length})`)

/** A route without what leaving out the documentation may cut. */
function withoutDocumentation(route: Record<string, unknown>) {
  const { summary: _s, description: _d, tags: _t, operationId: _o, deprecated: _p, responses: _r, ...kept } = route
  const request = kept.request as { body?: { description?: string; content?: Record<string, Record<string, unknown>> } } | undefined
  if (!request?.body) return kept
  const { description: _b, ...body } = request.body
  const content = Object.fromEntries(Object.entries(body.content ?? {}).map(([type, { example: _e, examples: _x, ...media }]) => [type, media]))
  return { ...kept, request: { ...request, body: { ...body, content } } }
}

describe("the app's routes without their documentation", () => {
  it('are compared by what validates: a check, a wrapper or a refinement more or less is a difference', () => {
    const schema = (name: z.ZodString) => z.object({ name, count: z.number().int() })
    expect(difference(schema(z.string().min(1)), schema(z.string().min(1)))).toBeUndefined()
    expect(difference(schema(z.string().min(1)), schema(z.string().min(2)))).toBeDefined()
    expect(difference(schema(z.string()), schema(z.string().regex(/^a/)))).toBeDefined()
    expect(difference(z.object({ a: z.string() }), z.object({ a: z.string().optional() }))).toBeDefined()
    expect(difference(z.string(), z.string().refine((s) => s !== 'x'))).toBeDefined()
    expect(difference(z.enum(['a', 'b']), z.enum(['a', 'c']))).toBeDefined()
  })

  it('are the same routes, with the same middleware, validators and request schemas, as the sources define', async () => {
    // Bundled where the project's packages resolve (so both apps share @hono/zod-openapi and zod); dist/ is not committed.
    await mkdir('dist', { recursive: true })
    dir = await mkdtemp(join(process.cwd(), 'dist', 'documentation-left-out-'))
    const outfile = join(dir, 'app.mjs')
    await build({ entryPoints: ['src/app.ts'], outfile, bundle: true, format: 'esm', platform: 'node', packages: 'external', plugins: [documentationLeftOut], logLevel: 'warning' })
    const transformed = (await import(pathToFileURL(outfile).href)) as { createApp: typeof createApp }
    const noDatabase = () => undefined as never
    const [originalApp, leftApp] = [createApp({ db: noDatabase }), transformed.createApp({ db: noDatabase })]
    expect(handlersOf(leftApp)).toEqual(handlersOf(originalApp))
    const original = routesOf(originalApp)
    const left = routesOf(leftApp)

    expect(original.size).toBeGreaterThan(100)
    expect([...left.keys()].sort()).toEqual([...original.keys()].sort())
    let cutSomething = false
    for (const [key, route] of original) {
      const leftRoute = left.get(key)!
      if (leftRoute.description === undefined && route.description !== undefined) cutSomething = true
      // Documentation the cut cannot see stays (a route built from a shared object, as \`...accessWrite\` with its tags): harmless, but compared as such.
      expect(difference(withoutDocumentation(route), withoutDocumentation(leftRoute)), key).toBeUndefined()
    }
    expect(cutSomething).toBe(true)
  })
})
