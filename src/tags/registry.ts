import { and, asc, eq, sql } from 'drizzle-orm'
import { features, featureTags, tags as tagsTable, tagTypes } from '../../schema/index.js'
import { batch, queryRows, untilUnchanged, type Db } from '../db.js'
import { nameExists, notFound, validationError } from '../core/errors.js'
import { eventsStatement } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import type { Author } from '../core/principal.js'
import type { Tag } from './schemas.js'

/** What every writer that may create tags uses: the registry as read, the 400 of an unknown type, the creation lock. */

export const tagKey = (t: Tag) => JSON.stringify([t.type, t.value])

export const noSuchTagType = (type: string) => validationError(`Tag type '${type}' does not exist`, [{ path: 'body.type', message: `tag type ${type} does not exist` }])

/** Of the tags (placeholder `tags`, JSON), which exist, and which types exist. */
export const registryOf = (db: Db, list: Tag[]) =>
  queryRows<{ type: string; value: string; tagExists: boolean; typeExists: boolean }>(
    db,
    sql`select x.type, x.value, exists (select from ${tagsTable} t where t.type = x.type and t.value = x.value) as "tagExists",
        exists (select from ${tagTypes} tt where tt.name = x.type) as "typeExists"
      from jsonb_to_recordset(${JSON.stringify(list)}::jsonb) as x (type text, value text)`,
  )

/**
 * Serializes the creation of a tag (by its type and value) between writers: the second one's checked statement then
 * sees the first's tag, so exactly one records `tag-created`. Held to the end of the batch it is the first statement of.
 * A tag locks one of 256 buckets, so a write creating 26,000 tags (a state restore) holds at most 256 locks, not one per
 * tag (which ran Postgres out of shared lock memory: a 500); tags sharing a bucket only wait for each other.
 */
export const tagCreationLocks = (db: Db, list: Tag[]) =>
  db.execute(
    sql`select count(pg_advisory_xact_lock(hashtextextended('tag-bucket:' || b, 0))) from (select distinct hashtextextended('tag:' || k, 0) & 255 as b from unnest(${sql.param(list.map(tagKey))}::text[]) as k order by 1) buckets`,
  )

/**
 * SQL true while the tags (JSON, `type` and `value`) are all still absent and their types present: what a write that
 * creates them (and records their `tag-created`) decided from.
 */
export const tagsStillNew = (list: unknown) =>
  sql<boolean>`not exists (select from jsonb_to_recordset(${list}::jsonb) as n (type text, value text)
    where exists (select from ${tagsTable} t where t.type = n.type and t.value = n.value) or not exists (select from ${tagTypes} tt where tt.name = n.type))`

const p = (name: string) => sql.placeholder(name)

/** GET /api/admin/tags and /api/admin/tags/{type}: tags by type then value. */
export async function listRegisteredTags(db: Db, type?: string): Promise<Tag[]> {
  return db
    .select({ value: tagsTable.value, type: tagsTable.type })
    .from(tagsTable)
    .where(type === undefined ? undefined : eq(tagsTable.type, type))
    .orderBy(asc(tagsTable.type), asc(tagsTable.value))
}

const noSuchTag = (tag: Tag) => notFound(`No tag with type ${tag.type} and value ${tag.value}`)

export async function getRegisteredTag(db: Db, tag: Tag): Promise<Tag> {
  const [row] = await db.select({ value: tagsTable.value, type: tagsTable.type }).from(tagsTable).where(and(eq(tagsTable.type, tag.type), eq(tagsTable.value, tag.value)))
  if (!row) throw noSuchTag(tag)
  return row
}

/** Creating a tag and its event, only while its type exists; `returned` tells why not (read in the statement's snapshot). */
const createStatement = eventsStatement<{ typeExists: boolean }>('flagpost_create_tag', {
  alongside: [
    sql`insert into ${tagsTable} (type, value, created_at) select ${p('type')}::text, ${p('value')}::text, ${p('createdAt')}::timestamptz
      where exists (select from ${tagTypes} where name = ${p('type')}::text) on conflict do nothing returning type`,
  ],
  guarded: true,
  returning: sql`json_build_object('typeExists', exists (select from ${tagTypes} where name = ${p('type')}::text))`,
})

/**
 * POST /api/admin/tags: 409 NameExistsError when the tag exists, 400 when its type does not. One batch: the tag's
 * creation lock (shared with tagging, which may create it too), then the statement, whose insert decides.
 */
export async function createTag(db: Db, caller: Author, tag: Tag): Promise<Tag> {
  const { actor, now } = caller
  const [, created] = await batch(db, [(q) => tagCreationLocks(q, [tag]), (q) => createStatement(q, actor, now, [{ type: 'tag-created', data: tag }], tag)])
  if (created.written > 0) return tag
  if (!created.returned?.typeExists) throw noSuchTagType(tag.type)
  throw nameExists(`A tag of type ${tag.type} with value ${tag.value} already exists`)
}

/** The flags tagged with the tag (placeholders `type`, `value`), as text the deletion checks again. */
const flagsWith = sql<string>`(select coalesce(string_agg(ft.feature_name, ',' order by ft.feature_name), '') from ${featureTags} ft where ft.tag_type = ${p('type')}::text and ft.tag_value = ${p('value')}::text)`

/** Deleting a tag, its flag tags with it (by cascade), and moving those flags' versions on, only while the flags tagged are those read. */
const deleteStatement = eventsStatement('flagpost_delete_tag', {
  alongside: [
    sql`delete from ${tagsTable} where type = ${p('type')}::text and value = ${p('value')}::text and ${flagsWith} = ${p('flags')}::text returning type`,
  ],
  guarded: true,
  unguarded: [
    sql`update ${features} set version = version + 1
      where exists (select from w0) and name in (select ft.feature_name from ${featureTags} ft where ft.tag_type = ${p('type')}::text and ft.tag_value = ${p('value')}::text)`,
  ],
})

/** Checks the caller may remove tags from flags of these projects. */
export type TagUseCheck = (db: Db, projects: string[]) => Promise<void>

/**
 * DELETE /api/admin/tags/{type}/{value}: deletes the tag and removes it from every flag that has it, as Unleash does.
 * Only `tag-deleted` is recorded (preData: the tag), as in Unleash; the flags' versions move on. 404 for an unknown tag.
 * Read (the flags tagged and their projects, for `check`), then one batch that locks the tag (holding off new flag
 * tags of it) and deletes it only while the flags tagged are those read.
 */
export async function deleteTag(db: Db, caller: Author, tag: Tag, check: TagUseCheck): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Tag ${tag.type}:${tag.value}`, async () => {
    const [read] = await queryRows<{ flags: string; projects: string[] }>(
      db,
      sql`select ${flagsWithNow(tag)} as flags,
          (select coalesce(array_agg(distinct f.project order by f.project), '{}') from ${featureTags} ft join ${features} f on f.name = ft.feature_name
            where ft.tag_type = ${tag.type} and ft.tag_value = ${tag.value}) as projects
        from ${tagsTable} t where t.type = ${tag.type} and t.value = ${tag.value}`,
    )
    if (!read) throw noSuchTag(tag)
    await check(db, read.projects)
    const event: NewEvent = { type: 'tag-deleted', data: null, preData: tag }
    const [, deleted] = await batch(db, [
      (q) => q.select({ type: tagsTable.type }).from(tagsTable).where(and(eq(tagsTable.type, tag.type), eq(tagsTable.value, tag.value))).for('update'),
      (q) => deleteStatement(q, actor, now, [event], { ...tag, flags: read.flags }),
    ])
    return deleted.written === 0 ? undefined : true
  })
}

const flagsWithNow = (tag: Tag) =>
  sql<string>`(select coalesce(string_agg(ft.feature_name, ',' order by ft.feature_name), '') from ${featureTags} ft where ft.tag_type = ${tag.type} and ft.tag_value = ${tag.value})`
