import { eq, sql } from 'drizzle-orm'
import { features, featureTags } from '../../schema/index.js'
import { untilUnchanged, type Db } from '../db.js'
import { notFound } from '../core/errors.js'
import { eventsStatement, guardPassed } from '../events/store.js'
import type { NewEvent } from '../events/types.js'
import type { Author } from '../core/principal.js'
import { tagsOf } from '../flags/lock.js'
import { flagVersionRead, guardSql, guardValues, readFlagVersion, type FlagVersion } from '../flags/states.js'
import type { Tag, TagInput } from './schemas.js'

/** Checks the caller may change the flag, once its project is known (after the flag is read, before it is written). */
export type Authorize = (db: Db, project: string) => Promise<void>

const p = (name: string) => sql.placeholder(name)

/** The flag is live (not archived), in any project: these routes know a flag by its name alone. 404 otherwise. */
function requireLive<F extends FlagVersion>(flag: F | undefined, name: string): F {
  if (!flag || flag.feature.archived) throw notFound(`Could not find feature flag ${name}`)
  return flag
}

export async function listTags(db: Db, featureName: string): Promise<Tag[]> {
  const [row] = await db.select({ archivedAt: features.archivedAt }).from(features).where(eq(features.name, featureName))
  if (!row || row.archivedAt) throw notFound(`Could not find feature flag ${featureName}`)
  return tagsOf(db, featureName)
}

/** A flag as adding a tag reads it, with its tags once the tag (placeholders `type`, `value`) is added, in their order. */
const flagForTag = flagVersionRead<{ tagsWith: Tag[] }>('flagpost_flag_for_tag', {
  extra: sql`(select json_agg(json_build_object('type', x.type, 'value', x.value) order by x.type, x.value)
    from (select t.tag_type as type, t.tag_value as value from ${featureTags} t where t.feature_name = f.name union select ${p('type')}, ${p('value')}) x) as "tagsWith"`,
})

/** Adding a tag (and moving the flag's version on: tags are versioned), with its event, if the flag is at the version read. */
const tagFlag = eventsStatement('flagpost_tag_flag', {
  alongside: [
    guardSql(),
    sql`insert into ${featureTags} (feature_name, tag_type, tag_value, created_at) select ${p('name')}, ${p('type')}, ${p('value')}, ${p('createdAt')}::timestamptz where ${guardPassed}
      on conflict do nothing returning feature_name`,
  ],
  guarded: true,
})

/** Removing a tag (and moving the flag's version on), with its event, if the flag is at the version read. */
const untagFlag = eventsStatement('flagpost_untag_flag', {
  alongside: [guardSql(), sql`delete from ${featureTags} where feature_name = ${p('name')} and tag_type = ${p('type')} and tag_value = ${p('value')} and ${guardPassed} returning feature_name`],
  guarded: true,
})

/**
 * POST /api/admin/features/{featureName}/tags. Idempotent: a tag the flag already has is answered like a new one, but
 * only a real addition records `feature-tagged`. The flag is read, `authorize` checks the caller may change a flag of
 * its project, and one statement tags it if it is still in that project at the version read.
 */
export async function addTag(db: Db, caller: Author, featureName: string, input: TagInput, authorize: Authorize): Promise<Tag> {
  const { actor, now } = caller
  const tag = { type: input.type ?? 'simple', value: input.value }
  await untilUnchanged(`Feature flag ${featureName}`, async () => {
    const flag = requireLive((await flagForTag(db, { name: featureName, ...tag }))[0], featureName)
    await authorize(db, flag.feature.project)
    if (flag.tags.some((t) => t.type === tag.type && t.value === tag.value)) return true
    const event: NewEvent = { type: 'feature-tagged', project: flag.feature.project, featureName, data: tag, preData: null, tags: flag.tagsWith }
    const { written } = await tagFlag(db, actor, now, [event], { ...guardValues(flag), ...tag })
    return written > 0 || undefined
  })
  return tag
}

/**
 * DELETE /api/admin/features/{featureName}/tags/{type}/{value}: 404 when the flag does not have the tag. The event's
 * `tags` are those before the removal, so it carries the tag it is about. Read, authorized and written as addTag.
 */
export async function removeTag(db: Db, caller: Author, featureName: string, tag: Tag, authorize: Authorize): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Feature flag ${featureName}`, async () => {
    const flag = requireLive(await readFlagVersion(db, featureName), featureName)
    await authorize(db, flag.feature.project)
    if (!flag.tags.some((t) => t.type === tag.type && t.value === tag.value)) throw notFound(`Feature flag ${featureName} has no tag ${tag.type}:${tag.value}`)
    const event: NewEvent = { type: 'feature-untagged', project: flag.feature.project, featureName, data: null, preData: tag, tags: flag.tags }
    const { written } = await untagFlag(db, actor, now, [event], { ...guardValues(flag), ...tag })
    return written > 0 || undefined
  })
}
