import * as z from '../http/zod.js'
import { eq } from 'drizzle-orm'
import type { MiddlewareHandler } from 'hono'
import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { ApiError } from '../core/errors.js'
import { Permission } from '../core/permissions.js'
import { settings } from '../../schema/index.js'
import type { Db } from '../db.js'
import type { AppEnv } from '../http/context.js'
import { recordEvents } from '../events/store.js'

const MAINTENANCE = 'maintenance'
export const MAINTENANCE_PATH = '/api/admin/maintenance'
/** How long an isolate trusts what it last read: another isolate's toggle reaches this one within it. */
const CACHE_MS = 5_000

const MaintenanceSchema = z.object({ enabled: z.boolean() }).openapi('maintenanceSchema')

/**
 * Whether the instance is in maintenance mode, read at most once per CACHE_MS per isolate (it is asked on every
 * admin write); a toggle through this isolate is known at once.
 */
export function createMaintenanceState(clock: () => Date) {
  let known: { enabled: boolean; at: number } | undefined
  return {
    async enabled(db: Db): Promise<boolean> {
      const now = clock().getTime()
      if (known && now - known.at < CACHE_MS && now >= known.at) return known.enabled
      const [row] = await db.select({ content: settings.content }).from(settings).where(eq(settings.name, MAINTENANCE))
      known = { enabled: (row?.content as { enabled?: boolean } | undefined)?.enabled === true, at: now }
      return known.enabled
    },
    set(enabled: boolean) {
      known = { enabled, at: clock().getTime() }
    },
  }
}
export type MaintenanceState = ReturnType<typeof createMaintenanceState>

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * For `/api/admin/*`: while maintenance mode is on, every write but the maintenance toggle itself answers 503, as
 * Unleash's maintenance middleware does (reads, sign-in and the SDK APIs are not under `/api/admin` and go on).
 */
export const maintenanceGuard =
  (state: MaintenanceState): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    if (WRITES.has(c.req.method) && c.req.path !== MAINTENANCE_PATH && (await state.enabled(c.get('db')))) {
      const error = new ApiError('ServiceUnavailableError', 'Unleash is currently in maintenance mode.')
      throw error
    }
    await next()
  }

const getMaintenanceRoute = adminRoute({
  method: 'get',
  path: MAINTENANCE_PATH,
  operationId: 'getMaintenance',
  tags: ['Maintenance'],
  summary: 'Get maintenance mode status',
  description: 'Whether maintenance mode is on: while it is, every admin write but this toggle answers 503; reads and the SDK APIs go on.',
  responses: { 200: { description: 'The maintenance mode', content: jsonContent(MaintenanceSchema) }, ...pickErrors(401, 403) },
})

const toggleMaintenanceRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: MAINTENANCE_PATH,
  operationId: 'toggleMaintenance',
  tags: ['Maintenance'],
  summary: 'Enabled/disabled maintenance mode',
  description:
    'Turns maintenance mode on or off (admins only), with `maintenance-mode-toggled`. Other isolates of the edge deployment learn it within 5 seconds (each reads it at most that often).',
  request: { body: { required: true, content: jsonContent(MaintenanceSchema) } },
  responses: { 204: { description: 'The mode was set' }, ...pickErrors(400, 401, 403, 415) },
})

export const maintenanceRoutes = (state: MaintenanceState) =>
  createRouter()
    .openapi(getMaintenanceRoute, async (c) => c.json({ enabled: await state.enabled(c.get('db')) }, 200))
    .openapi(toggleMaintenanceRoute, async (c) => {
      const { enabled } = c.req.valid('json')
      const { actor, now } = c.get('caller')
      await c.get('db').transaction(async (tx) => {
        const [row] = await tx.select({ content: settings.content }).from(settings).where(eq(settings.name, MAINTENANCE)).for('update')
        const before = (row?.content as { enabled?: boolean } | undefined)?.enabled === true
        const upsert = tx
          .insert(settings)
          .values({ name: MAINTENANCE, content: { enabled }, updatedAt: now })
          .onConflictDoUpdate({ target: settings.name, set: { content: { enabled }, updatedAt: now } })
        await recordEvents(tx, actor, now, [{ type: 'maintenance-mode-toggled', data: { enabled }, preData: { enabled: before } }], { alongside: [upsert] })
      })
      state.set(enabled)
      return c.body(null, 204)
    })
