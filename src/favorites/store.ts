import { and, eq } from 'drizzle-orm'
import { favoriteFeatures, favoriteProjects } from '../../schema/index.js'
import type { Db } from '../db.js'
import { notFound } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { requireFeature, tagsOf } from '../flags/lock.js'
import { projectExists } from '../projects/store.js'

/*
 * Favorites belong to the caller (`principal`, from principalKey). Setting one is idempotent: the event is
 * written only when the state really changes, which insert/delete ... returning tells exactly under concurrency too.
 * No flag or project row lock: the foreign key already keeps the row from disappearing under the insert.
 */

export async function setFeatureFavorite(db: Db, caller: Author, principal: string, projectId: string, featureName: string, favorite: boolean): Promise<void> {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    await requireFeature(tx, projectId, featureName)
    const changed = favorite
      ? await tx.insert(favoriteFeatures).values({ principal, featureName, createdAt: now }).onConflictDoNothing().returning({ featureName: favoriteFeatures.featureName })
      : await tx
          .delete(favoriteFeatures)
          .where(and(eq(favoriteFeatures.principal, principal), eq(favoriteFeatures.featureName, featureName)))
          .returning({ featureName: favoriteFeatures.featureName })
    if (changed.length === 0) return
    await recordEvents(tx, actor, now, [
      {
        type: favorite ? 'feature-favorited' : 'feature-unfavorited',
        project: projectId,
        featureName,
        data: { feature: featureName, favorite },
        preData: { feature: featureName, favorite: !favorite },
        tags: await tagsOf(tx, featureName),
      },
    ])
  })
}

export async function setProjectFavorite(db: Db, caller: Author, principal: string, projectId: string, favorite: boolean): Promise<void> {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    if (!(await projectExists(tx, projectId))) throw notFound(`Could not find project ${projectId}`)
    const changed = favorite
      ? await tx.insert(favoriteProjects).values({ principal, project: projectId, createdAt: now }).onConflictDoNothing().returning({ project: favoriteProjects.project })
      : await tx
          .delete(favoriteProjects)
          .where(and(eq(favoriteProjects.principal, principal), eq(favoriteProjects.project, projectId)))
          .returning({ project: favoriteProjects.project })
    if (changed.length === 0) return
    await recordEvents(tx, actor, now, [
      {
        type: favorite ? 'project-favorited' : 'project-unfavorited',
        project: projectId,
        data: { project: projectId, favorite },
        preData: { project: projectId, favorite: !favorite },
      },
    ])
  })
}
