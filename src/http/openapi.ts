import { createRoute, OpenAPIHono, type RouteConfig } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { Hook } from '@hono/zod-openapi'
import { ZodError } from 'zod'
import type { AppEnv } from './context.js'
import { validationError, type ErrorDetail } from './errors.js'

export const SECURITY_SCHEME = 'apiKey'

/** The `content` of a JSON request body or response. */
export const jsonContent = <T>(schema: T) => ({ 'application/json': { schema } })

/** A 200 with a JSON body serialized beforehand (a cached answer): typed as the route's declared JSON response. */
export const serializedJson = <Typed>(c: Context, json: string | Uint8Array): Typed => c.body(json as string | Uint8Array<ArrayBuffer>, 200, { 'content-type': 'application/json' }) as unknown as Typed

/** An admin route: documented with the token security scheme. Error responses are spread in by each route. */
export function adminRoute<const R extends RouteConfig>(config: R) {
  return createRoute({ ...config, security: [{ [SECURITY_SCHEME]: [] }] })
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
