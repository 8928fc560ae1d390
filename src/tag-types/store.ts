import { asc, eq, sql } from 'drizzle-orm'
import { features, featureTags, tags, tagTypes } from '../../schema/index.js'
import { batch, rowText, untilUnchanged, type Db } from '../db.js'
import { nameExists, notFound } from '../core/errors.js'
import { eventsStatement } from '../events/store.js'
import type { Author } from '../core/principal.js'
import type { NewEvent } from '../events/types.js'
import type { TagUseCheck } from '../tags/registry.js'
import type { TagType, TagTypeInput, UpdateTagType } from './schemas.js'

type TagTypeRow = typeof tagTypes.$inferSelect

/** A tag type as the API and its events show it (Unleash's shape: no creation time). */
function tagTypeOf(row: Pick<TagTypeRow, 'name' | 'description' | 'icon' | 'color'>): TagType {
  return { name: row.name, description: row.description ?? '', icon: row.icon, color: row.color }
}

const p = (name: string) => sql.placeholder(name)
const notFoundType = (name: string) => notFound(`Tagtype ${name} could not be found`)
const nameTaken = (name: string) => nameExists(`There already exists a tag-type with the name ${name}`)

export async function listTagTypes(db: Db): Promise<TagType[]> {
  return (await db.select().from(tagTypes).orderBy(asc(tagTypes.name))).map(tagTypeOf)
}

export async function getTagType(db: Db, name: string): Promise<TagType> {
  const [row] = await db.select().from(tagTypes).where(eq(tagTypes.name, name))
  if (!row) throw notFoundType(name)
  return tagTypeOf(row)
}

/** POST /api/admin/tag-types/validate: the body is valid (checked by the route) and its name is free (409 otherwise). */
export async function validateTagType(db: Db, input: TagTypeInput): Promise<TagType> {
  const [row] = await db.select({ name: tagTypes.name }).from(tagTypes).where(eq(tagTypes.name, input.name))
  if (row) throw nameTaken(input.name)
  return tagTypeOf({ name: input.name, description: input.description ?? null, icon: input.icon ?? null, color: input.color ?? null })
}

/** Creating a tag type and its event, unless the name is taken: the insert decides, so it needs no read first. */
const createStatement = eventsStatement('flagpost_create_tag_type', {
  alongside: [
    sql`insert into ${tagTypes} (name, description, icon, color, created_at)
      values (${p('name')}::text, ${p('description')}::text, ${p('icon')}::text, ${p('color')}::text, ${p('createdAt')}::timestamptz)
      on conflict do nothing returning name`,
  ],
  guarded: true,
})

/** POST /api/admin/tag-types: 409 NameExistsError when the name is taken. One statement. */
export async function createTagType(db: Db, caller: Author, input: TagTypeInput): Promise<TagType> {
  const { actor, now } = caller
  const tagType = tagTypeOf({ name: input.name, description: input.description ?? null, icon: input.icon ?? null, color: input.color ?? null })
  const { written } = await createStatement(db, actor, now, [{ type: 'tag-type-created', data: tagType }], {
    name: tagType.name,
    description: input.description ?? null,
    icon: tagType.icon,
    color: tagType.color,
  })
  if (written === 0) throw nameTaken(input.name)
  return tagType
}

/** Updating a tag type read as `snapshot`, with its event. */
const updateStatement = eventsStatement('flagpost_update_tag_type', {
  alongside: [
    sql`update ${tagTypes} set description = ${p('description')}::text, icon = ${p('icon')}::text, color = ${p('color')}::text
      where ${tagTypes.name} = ${p('name')}::text and ${rowText(tagTypes)} = ${p('snapshot')}::text returning name`,
  ],
  guarded: true,
})

/**
 * PUT /api/admin/tag-types/{name}: sets `description`, `icon` and `color`, each kept when absent. Read, then one
 * statement that writes only while the tag type is as read.
 */
export async function updateTagType(db: Db, caller: Author, name: string, input: UpdateTagType): Promise<TagType> {
  const { actor, now } = caller
  return untilUnchanged(`Tag type ${name}`, async () => {
    const [read] = await db.select({ row: tagTypes, snapshot: rowText(tagTypes) }).from(tagTypes).where(eq(tagTypes.name, name))
    if (!read) throw notFoundType(name)
    const before = read.row
    const after = { ...before, description: input.description ?? before.description, icon: input.icon !== undefined ? input.icon : before.icon, color: input.color !== undefined ? input.color : before.color }
    const event: NewEvent = { type: 'tag-type-updated', data: tagTypeOf(after), preData: tagTypeOf(before) }
    const { written } = await updateStatement(db, actor, now, [event], { name, snapshot: read.snapshot, description: after.description, icon: after.icon, color: after.color })
    return written === 0 ? undefined : tagTypeOf(after)
  })
}

/** What a tag type's deletion takes with it: its tags and the flags tagged with them, as text the write checks again. */
const usesOf = (name: unknown) =>
  sql<string>`(select coalesce(string_agg(ft.feature_name || ':' || ft.tag_value, ',' order by ft.feature_name, ft.tag_value), '') from ${featureTags} ft where ft.tag_type = ${name}::text)`
const tagsOf = (name: unknown) => sql<string>`(select coalesce(string_agg(t.value, ',' order by t.value), '') from ${tags} t where t.type = ${name}::text)`

const projectsUsing = (name: string) =>
  sql<string[]>`(select coalesce(array_agg(distinct f.project order by f.project), '{}') from ${featureTags} ft join ${features} f on f.name = ft.feature_name where ft.tag_type = ${name})`

/**
 * Deleting a tag type read as `snapshot`, its tags and the flag tags of its type (by cascade), moving the version of
 * every flag that loses a tag on, only while its tags and their flags are those read.
 */
const deleteStatement = eventsStatement('flagpost_delete_tag_type', {
  alongside: [
    sql`delete from ${tagTypes}
      where ${tagTypes.name} = ${p('name')}::text and ${rowText(tagTypes)} = ${p('snapshot')}::text and ${usesOf(p('name'))} = ${p('uses')}::text and ${tagsOf(p('name'))} = ${p('tags')}::text
      returning name`,
  ],
  guarded: true,
  unguarded: [
    sql`update ${features} set version = version + 1
      where exists (select from w0) and name in (select ft.feature_name from ${featureTags} ft where ft.tag_type = ${p('name')}::text)`,
  ],
})

/** Holds off new tags of the type and new flag tags of its tags until the deletion commits (their foreign keys wait on these rows). */
const typeLock = (db: Db, name: string) =>
  db.execute(sql`with tt as (select 1 from ${tagTypes} where name = ${name} for update), t as (select 1 from ${tags} where type = ${name} for update)
    select (select count(*) from tt) + (select count(*) from t) as locked`)


/**
 * DELETE /api/admin/tag-types/{name}: deletes the tag type with its tags, and removes them from every flag that has
 * them, as Unleash does (its foreign keys cascade). Records only `tag-type-deleted` (preData: the tag type), as Unleash;
 * the flags' versions move on, so what SDKs and caches hold of their tags is read again. `check` is given the projects
 * of the flags that lose a tag (the change-request rule). Read, then one batch that locks the type and its tags and
 * deletes only while they and their flags are as read.
 */
export async function deleteTagType(db: Db, caller: Author, name: string, check: TagUseCheck): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Tag type ${name}`, async () => {
    const [read] = await db
      .select({ row: tagTypes, snapshot: rowText(tagTypes), uses: usesOf(name), tags: tagsOf(name), projects: projectsUsing(name) })
      .from(tagTypes)
      .where(eq(tagTypes.name, name))
    if (!read) throw notFoundType(name)
    await check(db, read.projects)
    const event: NewEvent = { type: 'tag-type-deleted', data: null, preData: tagTypeOf(read.row) }
    const [, deleted] = await batch(db, [(q) => typeLock(q, name), (q) => deleteStatement(q, actor, now, [event], { name, snapshot: read.snapshot, uses: read.uses, tags: read.tags })])
    return deleted.written === 0 ? undefined : true
  })
}
