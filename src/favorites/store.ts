import { sql } from 'drizzle-orm'
import { favoriteFeatures, favoriteProjects, projects } from '../../schema/index.js'
import { untilUnchanged, type Db } from '../db.js'
import { notFound } from '../core/errors.js'
import { eventsStatement } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { flagVersionRead, guardValues, unchangedSql } from '../flags/states.js'

/*
 * Favorites belong to the caller (`principal`, from principalKey). Setting one is idempotent: the event is
 * written only when the state really changes, which insert/delete ... returning tells exactly under concurrency too.
 * A favorite is no part of a flag's version (src/flags/states.ts): it moves none.
 */

const p = (name: string) => sql.placeholder(name)

/** A flag as making it a favorite reads it: whether it is the principal's (placeholder `principal`) already. */
const flagForFavorite = flagVersionRead<{ favorite: boolean }>('flagpost_flag_for_favorite', {
  extra: sql`exists (select from ${favoriteFeatures} ff where ff.principal = ${p('principal')} and ff.feature_name = f.name) as favorite`,
})

// Written with its event while the flag is at the version read, so the event carries the flag's tags as they are.
const favoriteFlag = eventsStatement('flagpost_favorite_flag', {
  alongside: [
    sql`insert into ${favoriteFeatures} (principal, feature_name, created_at) select ${p('principal')}, ${p('name')}, ${p('createdAt')}::timestamptz where ${unchangedSql}
      on conflict do nothing returning feature_name`,
  ],
  guarded: true,
})
const unfavoriteFlag = eventsStatement('flagpost_unfavorite_flag', {
  alongside: [sql`delete from ${favoriteFeatures} where principal = ${p('principal')} and feature_name = ${p('name')} and ${unchangedSql} returning feature_name`],
  guarded: true,
})

/**
 * POST and DELETE /api/admin/projects/{projectId}/features/{featureName}/favorites: the flag, a live flag of the
 * project, is read with whether it is a favorite already, then one statement changes that if the flag is still
 * at the version read and nobody changed the favorite meanwhile (else it is read again).
 */
export async function setFeatureFavorite(db: Db, caller: Author, principal: string, projectId: string, featureName: string, favorite: boolean): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Feature flag ${featureName}`, async () => {
    const [flag] = await flagForFavorite(db, { name: featureName, principal })
    if (!flag || flag.feature.project !== projectId || flag.feature.archived) throw notFound(`Could not find feature flag ${featureName} in project ${projectId}`)
    if (flag.favorite === favorite) return true
    const event = {
      type: favorite ? 'feature-favorited' : 'feature-unfavorited',
      project: projectId,
      featureName,
      data: { feature: featureName, favorite },
      preData: { feature: featureName, favorite: !favorite },
      tags: flag.tags,
    } as const
    const { written } = await (favorite ? favoriteFlag : unfavoriteFlag)(db, actor, now, [event], { ...guardValues(flag), principal })
    return written > 0 || undefined
  })
}

const liveProject = sql`exists (select from ${projects} where id = ${p('project')} and archived_at is null)`

/** Making a project a favorite, with its event; `returned`: whether the project is a live one. */
const favoriteProject = eventsStatement('flagpost_favorite_project', {
  alongside: [
    sql`insert into ${favoriteProjects} (principal, project, created_at) select ${p('principal')}, ${p('project')}, ${p('createdAt')}::timestamptz where ${liveProject}
      on conflict do nothing returning project`,
  ],
  guarded: true,
  returning: sql<boolean>`${liveProject}`,
})
const unfavoriteProject = eventsStatement('flagpost_unfavorite_project', {
  alongside: [sql`delete from ${favoriteProjects} where principal = ${p('principal')} and project = ${p('project')} and ${liveProject} returning project`],
  guarded: true,
  returning: sql<boolean>`${liveProject}`,
})

/** POST and DELETE /api/admin/projects/{projectId}/favorites: one statement, which tells whether the project is there. */
export async function setProjectFavorite(db: Db, caller: Author, principal: string, projectId: string, favorite: boolean): Promise<void> {
  const { actor, now } = caller
  const event = {
    type: favorite ? 'project-favorited' : 'project-unfavorited',
    project: projectId,
    data: { project: projectId, favorite },
    preData: { project: projectId, favorite: !favorite },
  } as const
  const { returned } = await (favorite ? favoriteProject : unfavoriteProject)(db, actor, now, [event], { principal, project: projectId })
  if (!returned) throw notFound(`Could not find project ${projectId}`)
}
