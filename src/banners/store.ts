import { desc, eq, sql, type SQL } from 'drizzle-orm'
import { banners } from '../../schema/index.js'
import type { Db } from '../db.js'
import { notFound } from '../core/errors.js'
import { derivedEventsStatement } from '../events/store.js'
import { describeEvent } from '../events/describe.js'
import type { EventType } from '../events/types.js'
import type { Author } from '../core/principal.js'
import type { Banner, BannerInput } from './schemas.js'

type BannerRow = typeof banners.$inferSelect

const p = (name: string) => sql.placeholder(name)

function bannerOf(row: BannerRow): Banner {
  return {
    id: row.id,
    message: row.message,
    variant: row.variant as Banner['variant'],
    sticky: row.sticky,
    icon: row.icon,
    link: row.link,
    linkText: row.linkText,
    dialogTitle: row.dialogTitle,
    dialog: row.dialog,
    enabled: row.enabled,
    createdAt: row.createdAt.toISOString(),
  }
}

/** The banner of a row of `banners` (under `alias`) as JSON, as `bannerOf` shows it: what events carry and statements answer. */
const bannerJson = (alias: string) =>
  sql.raw(`jsonb_build_object('id', ${alias}.id, 'message', ${alias}.message, 'variant', ${alias}.variant, 'sticky', ${alias}.sticky, 'icon', ${alias}.icon,
    'link', ${alias}.link, 'linkText', ${alias}.link_text, 'dialogTitle', ${alias}.dialog_title, 'dialog', ${alias}.dialog, 'enabled', ${alias}.enabled,
    'createdAt', to_char(${alias}.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`)

/** Banner ids are whole numbers; anything else is simply not found. */
function parseId(id: string): number | undefined {
  return /^[1-9]\d{0,9}$/.test(id) && Number(id) <= 2147483647 ? Number(id) : undefined
}
const notFoundBanner = (id: string | number) => notFound(`Could not find banner with id ${id}`)

/** Every banner, newest first; only the enabled ones unless `all` (the admins' view). */
export async function listBanners(db: Db, { all }: { all: boolean }): Promise<Banner[]> {
  const rows = await db
    .select()
    .from(banners)
    .where(all ? undefined : eq(banners.enabled, true))
    .orderBy(desc(banners.id))
  return rows.map(bannerOf)
}

/**
 * The one-statement writes: the change (`w0`, `w1`), its event built from what it returns (so nothing is read first:
 * the statement decides), and the banner it leaves, as JSON. `label` and `summary` are the event's, made in JS.
 */
const eventOf = (type: EventType, data: SQL | null, preData: SQL | null, from: string) =>
  sql`(select coalesce(jsonb_agg(jsonb_build_object('type', ${type}::text, 'data', ${data ?? sql`null::jsonb`}, 'pre_data', ${preData ?? sql`null::jsonb`}, 'tags', '[]'::jsonb,
    'label', ${p('label')}::text, 'summary', ${p('summary')}::text)), '[]') from ${sql.raw(from)})`

const values = sql`${p('message')}::text, ${p('variant')}::text, ${p('sticky')}::boolean, ${p('icon')}::text, ${p('link')}::text, ${p('linkText')}::text,
  ${p('dialogTitle')}::text, ${p('dialog')}::text`

const createStatement = derivedEventsStatement<Banner>('flagpost_create_banner', {
  alongside: [
    sql`insert into ${banners} (message, variant, sticky, icon, link, link_text, dialog_title, dialog, enabled, created_at)
      values (${values}, ${p('enabled')}::boolean, ${p('createdAt')}::timestamptz)
      returning ${bannerJson('banners')} as banner`,
  ],
  events: eventOf('banner-created', sql`w0.banner`, null, 'w0'),
  returning: sql<Banner>`(select banner from w0)`,
})

// The banner as it was (locked, so the event's preData is what the update replaced), then the update.
const locked = sql`select ${bannerJson('b')} as banner, b.id from ${banners} b where b.id = ${p('id')}::integer for update`

const updateStatement = derivedEventsStatement<Banner>('flagpost_update_banner', {
  alongside: [
    locked,
    sql`update ${banners} b set (message, variant, sticky, icon, link, link_text, dialog_title, dialog) = (${values}), enabled = coalesce(${p('enabled')}::boolean, b.enabled)
      from w0 where b.id = w0.id
      returning ${bannerJson('b')} as banner`,
  ],
  events: eventOf('banner-updated', sql`w1.banner`, sql`w0.banner`, 'w1, w0'),
  returning: sql<Banner>`(select banner from w1)`,
})

// Switching on or off: an update only where it changes something (no event otherwise), answering the banner either way.
const switchStatement = derivedEventsStatement<Banner>('flagpost_switch_banner', {
  alongside: [
    locked,
    sql`update ${banners} b set enabled = ${p('enabled')}::boolean from w0 where b.id = w0.id and b.enabled <> ${p('enabled')}::boolean
      returning ${bannerJson('b')} as banner`,
  ],
  events: eventOf('banner-updated', sql`w1.banner`, sql`w0.banner`, 'w1, w0'),
  returning: sql<Banner>`coalesce((select banner from w1), (select banner from w0))`,
})

const deleteStatement = derivedEventsStatement<number>('flagpost_delete_banner', {
  alongside: [sql`delete from ${banners} b where b.id = ${p('id')}::integer returning ${bannerJson('b')} as banner`],
  events: eventOf('banner-deleted', null, sql`w0.banner`, 'w0'),
  returning: sql<number>`(select count(*)::int from w0)`,
})

const label = (caller: Author, type: EventType) => describeEvent(caller.actor, { type })

function fields(input: BannerInput) {
  return {
    message: input.message,
    variant: input.variant ?? 'info',
    sticky: input.sticky ?? false,
    icon: input.icon ?? null,
    link: input.link ?? null,
    linkText: input.linkText ?? null,
    dialogTitle: input.dialogTitle ?? null,
    dialog: input.dialog ?? null,
  }
}

/** POST /api/admin/banners: one statement, with `banner-created` (data: the banner). */
export async function createBanner(db: Db, caller: Author, input: BannerInput): Promise<Banner> {
  const { returned } = await createStatement(db, caller.actor, caller.now, { ...fields(input), enabled: input.enabled ?? true, ...label(caller, 'banner-created') })
  return parseBanner(returned)!
}

/** PUT /api/admin/banners/{id}: replaces every field (`enabled` kept when left out); one statement, with `banner-updated`. */
export async function updateBanner(db: Db, caller: Author, id: string, input: BannerInput): Promise<Banner> {
  const numeric = parseId(id)
  if (numeric === undefined) throw notFoundBanner(id)
  const { returned } = await updateStatement(db, caller.actor, caller.now, { id: numeric, ...fields(input), enabled: input.enabled ?? null, ...label(caller, 'banner-updated') })
  const banner = parseBanner(returned)
  if (!banner) throw notFoundBanner(id)
  return banner
}

/** POST /api/admin/banners/{id}/on and /off: one statement; `banner-updated` only when the banner changes. */
export async function switchBanner(db: Db, caller: Author, id: string, enabled: boolean): Promise<Banner> {
  const numeric = parseId(id)
  if (numeric === undefined) throw notFoundBanner(id)
  const { returned } = await switchStatement(db, caller.actor, caller.now, { id: numeric, enabled, ...label(caller, 'banner-updated') })
  const banner = parseBanner(returned)
  if (!banner) throw notFoundBanner(id)
  return banner
}

/** DELETE /api/admin/banners/{id}: one statement, with `banner-deleted` (preData: the banner). */
export async function deleteBanner(db: Db, caller: Author, id: string): Promise<void> {
  const numeric = parseId(id)
  if (numeric === undefined) throw notFoundBanner(id)
  const { returned } = await deleteStatement(db, caller.actor, caller.now, { id: numeric, ...label(caller, 'banner-deleted') })
  if (!returned) throw notFoundBanner(id)
}

// Drivers hand jsonb back parsed or as text.
const parseBanner = (value: unknown): Banner | undefined => (value === null || value === undefined ? undefined : typeof value === 'string' ? (JSON.parse(value) as Banner) : (value as Banner))
