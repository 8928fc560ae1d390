import { and, eq } from 'drizzle-orm'
import { features, featureTags } from '../../schema/index.js'
import type { Db } from '../db.js'
import { notFound } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { lockFlags, tagsOf, type FeatureRow } from '../flags/lock.js'
import type { Tag, TagInput } from './schemas.js'

/** Checks the caller may change the flag, once its project is known (inside the write's transaction). */
export type Authorize = (tx: Db, project: string) => Promise<void>

/** The live (not archived) flag of that name in any project, or 404: these routes know a flag by its name alone. */
async function liveFlagNamed(db: Db, name: string, lock = false): Promise<FeatureRow> {
  const [row] = lock ? await lockFlags(db, [name]) : await db.select().from(features).where(eq(features.name, name))
  if (!row || row.archivedAt) throw notFound(`Could not find feature flag ${name}`)
  return row
}

export async function listTags(db: Db, featureName: string): Promise<Tag[]> {
  await liveFlagNamed(db, featureName)
  return tagsOf(db, featureName)
}

/** Idempotent: a tag the flag already has is answered like a new one, but only a real addition records `feature-tagged`. */
export async function addTag(db: Db, caller: Author, featureName: string, input: TagInput, authorize: Authorize): Promise<Tag> {
  const { actor, now } = caller
  const tag = { type: input.type ?? 'simple', value: input.value }
  await db.transaction(async (tx) => {
    const flag = await liveFlagNamed(tx, featureName, true)
    await authorize(tx, flag.project)
    const added = await tx.insert(featureTags).values({ featureName, ...tag, createdAt: now }).onConflictDoNothing().returning({ type: featureTags.type })
    if (added.length === 0) return
    await recordEvents(tx, actor, now, [{ type: 'feature-tagged', project: flag.project, featureName, data: tag, preData: null, tags: await tagsOf(tx, featureName) }])
  })
  return tag
}

/** 404 when the flag does not have the tag. The event's `tags` are those before the removal, so it carries the tag it is about. */
export async function removeTag(db: Db, caller: Author, featureName: string, tag: Tag, authorize: Authorize): Promise<void> {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    const flag = await liveFlagNamed(tx, featureName, true)
    await authorize(tx, flag.project)
    const tagsBefore = await tagsOf(tx, featureName)
    const removed = await tx
      .delete(featureTags)
      .where(and(eq(featureTags.featureName, featureName), eq(featureTags.type, tag.type), eq(featureTags.value, tag.value)))
      .returning({ type: featureTags.type })
    if (removed.length === 0) throw notFound(`Feature flag ${featureName} has no tag ${tag.type}:${tag.value}`)
    await recordEvents(tx, actor, now, [{ type: 'feature-untagged', project: flag.project, featureName, data: null, preData: tag, tags: tagsBefore }])
  })
}
