import { createRoute, OpenAPIHono, type RouteConfig } from '@hono/zod-openapi'
import type { Context, MiddlewareHandler } from 'hono'
import type { Hook } from '@hono/zod-openapi'
import { ZodError } from 'zod'
import type { AppEnv } from './context.js'
import { requirePermission, requirePermissionInSomeProject, type PermissionName } from '../core/permissions.js'
import { validationError, type ErrorDetail } from '../core/errors.js'
import { MemoRouter } from './route-memo.js'

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

/**
 * The permission a route needs, declared with it (and published as `x-permission`). `project` and
 * `environment` name the path parameters it applies to. It is checked before the request is validated, so
 * a caller without it learns nothing from how its input is judged. `checkedBy: 'handler'`: which
 * permission, or where it applies, depends on the body or on stored data (a token's type, a change
 * request's environment): the handler checks it, and this says which.
 */
export interface RoutePermission {
  name: PermissionName
  project?: string
  environment?: string
  checkedBy?: 'handler'
  /** Held instance-wide or in at least one project (e.g. an Owner of any project), for what names no project. */
  inSomeProject?: true
}

type ReadMethod = 'get' | 'head' | 'options' | 'trace'
type Declared<R extends RouteConfig> = R['method'] extends ReadMethod
  ? { 'x-permission'?: RoutePermission }
  : { 'x-change-requests': ChangeRequestRule; 'x-permission': RoutePermission | 'any-caller' }

/**
 * A guarded route whose handler answered with success without consulting the change-request rule is a
 * programming error: fail it (the write-route walk in test/every-change-has-its-event.test.ts meets every route).
 */
const changeRequestRuleConsulted: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next()
  if (c.res.status < 300 && !c.get('changeRequestRuleConsulted')) throw new Error(`${c.req.method} ${c.req.routePath} is declared guarded but did not check change requests`)
}

const permissionFirst =
  ({ name, project, environment, inSomeProject }: RoutePermission): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    if (inSomeProject) requirePermissionInSomeProject(c.get('principal'), name)
    else requirePermission(c.get('principal'), name, { project: project && c.req.param(project), environment: environment && c.req.param(environment) })
    await next()
  }

/**
 * An admin route: documented with the token security scheme. A write route declares its change-request
 * rule and its permission (`'any-caller'`: any authenticated caller, for what is the caller's own).
 * Error responses are spread in by each route.
 */
export function adminRoute<const R extends RouteConfig>(config: R & Declared<R>) {
  const route = createRoute({ ...(config as R), security: [{ [SECURITY_SCHEME]: [] }] })
  const declared = config as { 'x-change-requests'?: ChangeRequestRule; 'x-permission'?: RoutePermission | 'any-caller' }
  const permission = declared['x-permission']
  const own = route.middleware === undefined ? [] : Array.isArray(route.middleware) ? route.middleware : [route.middleware]
  const middleware = [
    ...(declared['x-change-requests'] === 'guarded' ? [changeRequestRuleConsulted] : []),
    ...(permission && permission !== 'any-caller' && permission.checkedBy !== 'handler' ? [permissionFirst(permission)] : []),
    ...own,
  ]
  return middleware.length === 0 ? route : { ...route, middleware }
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

/** A group of routes; the app's own (`memoRoutes`) remembers its route matches (`MemoRouter`). */
export function createRouter(options: { memoRoutes?: boolean } = {}) {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook, ...(options.memoRoutes ? { router: new MemoRouter() } : {}) })
}
