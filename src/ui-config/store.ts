import { and, eq, sql } from 'drizzle-orm'
import { settings } from '../../schema/index.js'
import { rowText, untilUnchanged, type Db } from '../db.js'
import { recordEvents } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import type { Author } from '../core/principal.js'

/** The settings row of the frontend API's CORS origins (as Unleash's `frontend.settings`). */
const FRONTEND = 'frontend.settings'
/** How long an app keeps the stored origins before reading them again: a change through another isolate lands within it. */
const ORIGINS_TTL_MS = 5_000

export interface FrontendSettings {
  frontendApiOrigins: string[]
}

/** The origins an admin stored (POST /api/admin/ui-config/cors), or undefined when none were: the deployment's default holds. */
export async function storedOrigins(db: Db): Promise<string[] | undefined> {
  const [row] = await db.select({ content: settings.content }).from(settings).where(eq(settings.name, FRONTEND))
  return (row?.content as FrontendSettings | undefined)?.frontendApiOrigins
}

/** The frontend API's CORS origins of one app: the stored ones, read at most every ORIGINS_TTL_MS, else the deployment's. */
export function createFrontendOrigins(defaults: string[], clock: () => Date) {
  let cached: { origins: string[]; at: number } | undefined
  return {
    defaults,
    async get(db: Db): Promise<string[]> {
      const now = clock().getTime()
      if (cached && now - cached.at < ORIGINS_TTL_MS) return cached.origins
      const origins = (await storedOrigins(db)) ?? defaults
      cached = { origins, at: now }
      return origins
    },
    forget() {
      cached = undefined
    },
  }
}
export type FrontendOrigins = ReturnType<typeof createFrontendOrigins>

declare module 'hono' {
  interface ContextVariableMap {
    frontendOrigins: FrontendOrigins
  }
}

/**
 * Stores the frontend API's CORS origins, with `setting-created` or `setting-updated`, in one statement made only while
 * the row is as read.
 */
export async function saveFrontendOrigins(db: Db, caller: Author, origins: string[]): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged('The frontend settings', async () => {
    const [row] = await db.select({ content: settings.content, snapshot: rowText(settings) }).from(settings).where(eq(settings.name, FRONTEND))
    const stored: FrontendSettings = { frontendApiOrigins: origins }
    const change = row
      ? db.update(settings).set({ content: stored, updatedAt: now }).where(and(eq(settings.name, FRONTEND), sql`${rowText(settings)} = ${row.snapshot}`)).returning({ name: settings.name })
      : db.insert(settings).values({ name: FRONTEND, content: stored, updatedAt: now }).onConflictDoNothing().returning({ name: settings.name })
    const event: NewEvent = row ? { type: 'setting-updated', data: { id: FRONTEND, ...stored }, preData: { id: FRONTEND, ...(row.content as FrontendSettings) } } : { type: 'setting-created', data: { id: FRONTEND, ...stored } }
    return (await recordEvents(db, actor, now, [event], { alongside: [change], guarded: true })) > 0 || undefined
  })
}
