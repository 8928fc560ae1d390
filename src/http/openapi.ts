import { createRoute, OpenAPIHono, type RouteConfig } from '@hono/zod-openapi'
import type { Context, MiddlewareHandler } from 'hono'
import type { Hook } from '@hono/zod-openapi'
import { ZodError } from 'zod'
import type { AppEnv } from './context.js'
import { validationError, type ErrorDetail } from './errors.js'

export const SECURITY_SCHEME = 'apiKey'

/** The `content` of a JSON request body or response. */
export const jsonContent = <T>(schema: T) => ({ 'application/json': { schema } })

/** A 200 with a JSON body serialized beforehand (a cached answer): typed as the route's declared JSON response. */
export const serializedJson = <Typed>(c: Context, json: string | Uint8Array): Typed => c.body(json as string | Uint8Array<ArrayBuffer>, 200, { 'content-type': 'application/json' }) as unknown as Typed

/**
 * Where a write route stands with change requests, declared with the route (and published as
 * `x-change-requests`), so that no write route can be added without deciding it:
 * - `guarded`: it can change what SDKs of an environment receive, so a direct write touching an
 *   environment where the project requires change requests needs SKIP_CHANGE_REQUEST there
 *   (src/change-requests/guard.ts); the route fails loudly if its handler never asked;
 * - `no-sdk-effect`: nothing it writes changes what an SDK evaluates;
 * - `change-request`: the change-request workflow itself (an applied change request is the sanctioned path).
 */
export type ChangeRequestRule = 'guarded' | 'no-sdk-effect' | 'change-request'

type ReadMethod = 'get' | 'head' | 'options' | 'trace'
type DeclaredRule<R extends RouteConfig> = R['method'] extends ReadMethod ? unknown : { 'x-change-requests': ChangeRequestRule }

/**
 * A guarded route whose handler answered with success without consulting the change-request rule is a
 * programming error: fail it (the write-route walk in test/every-change-has-its-event.test.ts meets every route).
 */
const changeRequestRuleConsulted: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next()
  if (c.res.status < 300 && !c.var.changeRequestRuleConsulted) throw new Error(`${c.req.method} ${c.req.routePath} is declared guarded but did not check change requests`)
}

/** An admin route: documented with the token security scheme. Error responses are spread in by each route. */
export function adminRoute<const R extends RouteConfig>(config: R & DeclaredRule<R>) {
  const route = createRoute({ ...(config as R), security: [{ [SECURITY_SCHEME]: [] }] })
  if ((config as { 'x-change-requests'?: ChangeRequestRule })['x-change-requests'] !== 'guarded') return route
  const own = route.middleware === undefined ? [] : Array.isArray(route.middleware) ? route.middleware : [route.middleware]
  return { ...route, middleware: [changeRequestRuleConsulted, ...own] }
}

export function issuesToDetails(error: ZodError, prefix?: string): ErrorDetail[] {
  return error.issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].filter((p) => p !== undefined && p !== '').join('.') || '(root)',
    message: issue.message,
  }))
}

export function zodValidationError(error: ZodError, prefix?: string) {
  const details = issuesToDetails(error, prefix)
  return validationError(`Request validation failed: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`, details)
}

const targetNames: Record<string, string> = { json: 'body', query: 'query', param: 'path', header: 'header' }

/** zod failures of any route become one ValidationError. */
export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (!result.success) throw zodValidationError(result.error as ZodError, targetNames[result.target] ?? result.target)
}

export function createRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
}
