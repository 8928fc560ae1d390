import { eq, sql } from 'drizzle-orm'
import { features, featureTags, tags as tagsTable } from '../../schema/index.js'
import { batch, together, untilUnchanged, type Db } from '../db.js'
import { notFound } from '../core/errors.js'
import { noSuchTagType, registryOf, tagCreationLocks, tagKey as key, tagsStillNew } from './registry.js'
import { eventsStatement } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import type { Author } from '../core/principal.js'
import { tagsOf } from '../flags/lock.js'
import { flagVersionRead, type FlagVersion } from '../flags/states.js'
import type { Tag, TagInput } from './schemas.js'

/** Checks the caller may change the flag, once its project is known (after the flag is read, before it is written). */
export type Authorize = (db: Db, project: string) => Promise<void>

const p = (name: string) => sql.placeholder(name)
const sameTag = (a: Tag) => (b: Tag) => a.type === b.type && a.value === b.value
const byTypeThenValue = (a: Tag, b: Tag) => (a.type < b.type ? -1 : a.type > b.type ? 1 : a.value < b.value ? -1 : a.value > b.value ? 1 : 0)
const flagNotFound = (name: string) => notFound(`Could not find feature flag ${name}`)

export async function listTags(db: Db, featureName: string): Promise<Tag[]> {
  const [row] = await db.select({ archivedAt: features.archivedAt }).from(features).where(eq(features.name, featureName))
  if (!row || row.archivedAt) throw flagNotFound(featureName)
  return tagsOf(db, featureName)
}

/** Flags by name (placeholder `names`, a text array), as tagging reads them. */
const flagsNamed = flagVersionRead('flagpost_flags_for_tags', { where: sql`f.name = any(${p('names')}::text[])` })

/** Holds off other writers of the flags (placeholder-free: a batch's first statement), in name order as every locker does. */
const flagLocks = (db: Db, names: string[]) => db.execute(sql`select count(*) from (select 1 from ${features} where name = any(${sql.param(names)}::text[]) order by name for update) locked`)

/**
 * The flags' tags changed in one statement, with their events, only while the flags are still at the versions read
 * (which pins their tags: tag writes move it on), the tags to create still absent with their types present, and the tags
 * to add that existed still there. Every change waits on that check (w0); the flags changed move their version on.
 */
const tagChangeStatement = eventsStatement('flagpost_change_flag_tags', {
  alongside: [
    sql`select 1 as ok where
      (select count(*) from ${features} f, jsonb_to_recordset(${p('flags')}::jsonb) as x (name text, project text, version integer, "createdAtMs" float8)
        where f.name = x.name and f.project = x.project and f.archived_at is null and f.version = x.version
          and (extract(epoch from f.created_at) * 1000)::float8 = x."createdAtMs") = jsonb_array_length(${p('flags')}::jsonb)
      and ${tagsStillNew(p('newTags'))}
      and not exists (select from jsonb_to_recordset(${p('oldTags')}::jsonb) as o (type text, value text)
        where not exists (select from ${tagsTable} t where t.type = o.type and t.value = o.value))`,
  ],
  guarded: true,
  unguarded: [
    sql`update ${features} f set version = f.version + 1 from jsonb_to_recordset(${p('flags')}::jsonb) as x (name text) where f.name = x.name and exists (select from w0) returning f.name`,
    sql`insert into ${tagsTable} (type, value, created_at) select n.type, n.value, ${p('createdAt')}::timestamptz
      from jsonb_to_recordset(${p('newTags')}::jsonb) as n (type text, value text) where exists (select from w0) on conflict do nothing returning type`,
    sql`insert into ${featureTags} (feature_name, tag_type, tag_value, created_at) select a.name, a.type, a.value, ${p('createdAt')}::timestamptz
      from jsonb_to_recordset(${p('adds')}::jsonb) as a (name text, type text, value text) where exists (select from w0) on conflict do nothing returning feature_name`,
    sql`delete from ${featureTags} ft using jsonb_to_recordset(${p('removes')}::jsonb) as r (name text, type text, value text)
      where ft.feature_name = r.name and ft.tag_type = r.type and ft.tag_value = r.value and exists (select from w0) returning ft.feature_name`,
  ],
})

export interface TagChange {
  /** The flags to change, by name: each must be live (404 otherwise), and `inProject` decides about its project. */
  features: string[]
  /** A tag's type defaults to `simple`. */
  added: TagInput[]
  removed: TagInput[]
  /** Called with each flag's project after the read: throws for a flag the change may not touch (another project). */
  inProject?: (flag: FlagVersion) => void
  /** A removed tag the flag does not have is a 404 (once the caller is authorized) rather than nothing to do. */
  removedMustExist?: boolean
}

/**
 * Adds and removes tags of flags in one write, for every tagging route. `added` first, then `removed` (as Unleash's
 * PUT): a tag in both ends up absent. New tags of an existing type are created with `tag-created`; an added tag of an
 * unknown type is a 400. Only real changes record `feature-tagged` (data: the tag; tags: the flag's after the change)
 * or `feature-untagged` (preData: the tag; tags: the flag's before). The flags and the registry are read in one round
 * trip, every flag's project is checked (`authorize`, `inProject`), and one batch locks the flags and the new tags,
 * then writes all of it, or nothing, only while what was read still holds; read again otherwise. Answers each flag's
 * tags after the change.
 */
export async function changeFlagTags(db: Db, caller: Author, change: TagChange, authorize: Authorize): Promise<Map<string, Tag[]>> {
  const { actor, now } = caller
  const names = [...new Set(change.features)]
  const added = dedupe(change.added)
  const removed = dedupe(change.removed)
  return untilUnchanged(`The tags of ${names.join(', ')}`, async () => {
    const [flags, registry] = await together(db, [(q) => flagsNamed(q, { names }), (q) => registryOf(q, added)])
    const found = new Map(flags.map((f) => [f.feature.name, f]))
    for (const name of names) {
      const flag = found.get(name)
      if (!flag || flag.feature.archived) throw flagNotFound(name)
    }
    for (const flag of flags) change.inProject?.(flag)
    for (const project of [...new Set(flags.map((f) => f.feature.project))].sort()) await authorize(db, project)
    const unknownType = registry.find((r) => !r.tagExists && !r.typeExists)
    if (unknownType) throw noSuchTagType(unknownType.type)
    const newTags = registry.filter((r) => !r.tagExists).map(({ type, value }) => ({ type, value }))
    const oldTags = registry.filter((r) => r.tagExists).map(({ type, value }) => ({ type, value }))

    const events: NewEvent[] = newTags.map((tag) => ({ type: 'tag-created', data: tag }))
    const changed: FlagVersion[] = []
    const adds: (Tag & { name: string })[] = []
    const removes: (Tag & { name: string })[] = []
    const after = new Map<string, Tag[]>()
    for (const name of names) {
      const flag = found.get(name)!
      const { project } = flag.feature
      const adding = added.filter((t) => !flag.tags.some(sameTag(t)) && !removed.some(sameTag(t)))
      const removing = removed.filter((t) => flag.tags.some(sameTag(t)))
      const missing = change.removedMustExist && removed.find((t) => !flag.tags.some(sameTag(t)))
      if (missing) throw notFound(`Feature flag ${name} has no tag ${missing.type}:${missing.value}`)
      const tags = [...flag.tags.filter((t) => !removing.some(sameTag(t))), ...adding].sort(byTypeThenValue)
      after.set(name, tags)
      if (adding.length === 0 && removing.length === 0) continue
      changed.push(flag)
      for (const tag of adding) {
        adds.push({ name, ...tag })
        events.push({ type: 'feature-tagged', project, featureName: name, data: tag, preData: null, tags })
      }
      for (const tag of removing) {
        removes.push({ name, ...tag })
        events.push({ type: 'feature-untagged', project, featureName: name, data: null, preData: tag, tags: flag.tags })
      }
    }
    // Tags are created for every added tag, as Unleash does, even where no flag gains one.
    if (events.length === 0) return after
    const values = {
      flags: JSON.stringify(changed.map((f) => ({ name: f.feature.name, project: f.feature.project, version: f.version, createdAtMs: f.createdAtMs }))),
      newTags: JSON.stringify(newTags),
      oldTags: JSON.stringify(oldTags),
      adds: JSON.stringify(adds),
      removes: JSON.stringify(removes),
    }
    const [, , written] = await batch(db, [
      (q) => flagLocks(q, changed.map((f) => f.feature.name)),
      (q) => tagCreationLocks(q, newTags),
      (q) => tagChangeStatement(q, actor, now, events, values),
    ])
    return written.written > 0 ? after : undefined
  })
}

function dedupe(list: { type?: string | undefined; value: string }[]): Tag[] {
  return [...new Map(list.map((t) => ({ type: t.type ?? 'simple', value: t.value })).map((t) => [key(t), t])).values()]
}

/**
 * POST /api/admin/features/{featureName}/tags. Idempotent: a tag the flag already has is answered like a new one, but
 * only a real addition records `feature-tagged` (and a new tag `tag-created`).
 */
export async function addTag(db: Db, caller: Author, featureName: string, input: { type?: string | undefined; value: string }, authorize: Authorize): Promise<Tag> {
  const tag = { type: input.type ?? 'simple', value: input.value }
  await changeFlagTags(db, caller, { features: [featureName], added: [tag], removed: [] }, authorize)
  return tag
}

/**
 * DELETE /api/admin/features/{featureName}/tags/{type}/{value}: 404 when the flag does not have the tag. The event's
 * `tags` are those before the removal, so it carries the tag it is about.
 */
export async function removeTag(db: Db, caller: Author, featureName: string, tag: Tag, authorize: Authorize): Promise<void> {
  await changeFlagTags(db, caller, { features: [featureName], added: [], removed: [tag], removedMustExist: true }, authorize)
}
