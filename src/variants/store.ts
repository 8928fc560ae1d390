import { and, eq, sql } from 'drizzle-orm'
import { featureEnvironments } from '../../schema/index.js'
import type { Db } from '../db.js'
import { notFound } from '../core/errors.js'
import { zodValidationError } from '../http/openapi.js'
import { eventsStatement, guardPassed, recordEvents } from '../events/store.js'
import type { EventTag, NewEvent } from '../events/types.js'
import type { Author } from '../core/principal.js'
import { featureEnvironmentOf, lockForChange, requireFeature } from '../flags/lock.js'
import { eventTagsOf, guardSql, guardValues, nextState, writeOptimistically, type FlagStates } from '../flags/states.js'
import { applyJsonPatch } from '../flags/store.js'
import type { PatchOperation } from '../flags/schemas.js'
import { VariantsInputSchema, type Variant } from './schemas.js'
import { normalizeVariants } from './weights.js'

/** Validates a whole variant list as clients send it and returns it normalized (weights computed, sorted by name): the one check of an environment's variants, whichever path they arrive by. */
export function toVariants(candidate: unknown, path = 'variants'): Variant[] {
  const parsed = VariantsInputSchema.safeParse(candidate)
  if (!parsed.success) throw zodValidationError(parsed.error, path)
  return normalizeVariants(parsed.data, { sortByName: true, path })
}

const p = (name: string) => sql.placeholder(name)

/** The optimistic writes of variants (see src/flags/states.ts): every environment of the flag, or one. */
const writeAllVariants = eventsStatement('flagpost_write_variants', {
  alongside: [guardSql(), sql`update ${featureEnvironments} set variants = ${p('variants')}::jsonb where feature_name = ${p('name')} and ${guardPassed} returning feature_name`],
  guarded: true,
})
const writeEnvironmentVariants = eventsStatement('flagpost_write_environment_variants', {
  alongside: [
    guardSql(),
    sql`update ${featureEnvironments} set variants = ${p('variants')}::jsonb where feature_name = ${p('name')} and environment = ${p('environment')} and ${guardPassed} returning feature_name`,
  ],
  guarded: true,
})

/**
 * PATCH /api/admin/projects/{projectId}/features/{featureName}/variants: patches the flag's variants (those of its first environment) and stores the result in
 * every environment, all or none (unlike Unleash). One `feature-variants-updated` event per environment,
 * each with that environment's old variants. Written optimistically (see src/flags/states.ts).
 */
export async function patchFeatureVariants(
  db: Db,
  caller: Author,
  projectId: string,
  featureName: string,
  operations: PatchOperation[],
  states?: FlagStates,
  /** Throws (403) unless the caller may change variants in each environment the write reaches, read with the write. */
  mayWrite: (environments: string[]) => void = () => {},
) {
  const { actor, now } = caller
  const change = (project: string, tags: EventTag[], envs: { environment: string; variants: unknown[] }[]) => {
    mayWrite(envs.map((e) => e.environment))
    const variants = toVariants(applyJsonPatch(envs[0]?.variants ?? [], operations))
    const events = envs.map((e): NewEvent => ({ type: 'feature-variants-updated', project, featureName, environment: e.environment, data: { variants }, preData: { variants: e.variants }, tags }))
    return { variants, events }
  }
  return writeOptimistically(db, states, { projectId, featureName }, { principal: '', now }, {
    async write(state, next) {
      const { variants, events } = change(state.feature.project, eventTagsOf(state.feature), state.feature.environments.map((e) => ({ environment: e.name, variants: e.variants })))
      if (events.length === 0) return undefined
      const { written } = await writeAllVariants(db, actor, now, events, { ...guardValues(state), variants: JSON.stringify(variants) })
      if (written === 0) return undefined
      next(nextState(state, { environments: new Map(state.feature.environments.map((e) => [e.name, { variants }])) }))
      return variants
    },
    locked: () =>
      db.transaction(async (tx) => {
        const { row, tags, environments } = await lockForChange(tx, projectId, featureName)
        const { variants, events } = change(row.project, tags, environments)
        await recordEvents(tx, actor, now, events, { alongside: [tx.update(featureEnvironments).set({ variants }).where(eq(featureEnvironments.featureName, featureName))] })
        return variants
      }),
  })
}

export async function getEnvironmentVariants(db: Db, projectId: string, featureName: string, environment: string): Promise<Variant[]> {
  await requireFeature(db, projectId, featureName)
  return (await featureEnvironmentOf(db, featureName, environment)).fe.variants as Variant[]
}

/**
 * Sets one environment's variants, from a whole list (PUT) or a patch of the current one (PATCH). Written
 * optimistically (see src/flags/states.ts).
 */
export async function setEnvironmentVariants(
  db: Db,
  caller: Author,
  target: { projectId: string; featureName: string; environment: string },
  change: { replace: unknown } | { patch: PatchOperation[] },
  states?: FlagStates,
) {
  const { actor, now } = caller
  const missing = () => notFound(`Could not find environment ${target.environment} for feature flag ${target.featureName}`)
  const changed = (project: string, tags: EventTag[], before: Variant[]) => {
    const variants = toVariants('replace' in change ? change.replace : applyJsonPatch(before, change.patch))
    const event: NewEvent = { type: 'feature-environment-variants-updated', project, featureName: target.featureName, environment: target.environment, data: { variants }, preData: { variants: before }, tags }
    return { variants, event }
  }
  return writeOptimistically(db, states, target, { principal: '', now }, {
    fromRead(feature) {
      if (!feature.environments.some((e) => e.name === target.environment)) throw missing()
      return undefined
    },
    async write(state, next) {
      const env = state.feature.environments.find((e) => e.name === target.environment)
      if (!env) return undefined
      const { variants, event } = changed(state.feature.project, eventTagsOf(state.feature), env.variants)
      const { written } = await writeEnvironmentVariants(db, actor, now, [event], { ...guardValues(state), environment: env.name, variants: JSON.stringify(variants) })
      if (written === 0) return undefined
      next(nextState(state, { environments: new Map([[env.name, { variants }]]) }))
      return variants
    },
    locked: () =>
      db.transaction(async (tx) => {
        const { row, tags, fe } = await lockForChange(tx, target.projectId, target.featureName, target.environment)
        const { variants, event } = changed(row.project, tags, fe.variants as Variant[])
        const update = tx
          .update(featureEnvironments)
          .set({ variants })
          .where(and(eq(featureEnvironments.featureName, target.featureName), eq(featureEnvironments.environment, target.environment)))
        await recordEvents(tx, actor, now, [event], { alongside: [update] })
        return variants
      }),
  })
}
