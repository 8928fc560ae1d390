import { and, asc, desc, eq } from 'drizzle-orm'
import Mustache from 'mustache'
import { addons, integrationEvents } from '../../schema/index.js'
import type { Db } from '../db.js'
import { notFound, validationError, type ErrorDetail } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { unknownEnvironments } from '../environments/store.js'
import { eventView } from '../events/search.js'
import { MASK, maskSensitive, providerNamed } from './providers.js'
import { parseCustomHeaders, webhookUrlProblem } from './webhook-target.js'
import type { AddonInput } from './schemas.js'

type AddonRow = typeof addons.$inferSelect

export function addonView(row: AddonRow) {
  return {
    id: row.id,
    provider: row.provider,
    description: row.description,
    enabled: row.enabled,
    parameters: maskSensitive(row.provider, row.parameters as Record<string, string>),
    events: row.events,
    projects: row.projects,
    environments: row.environments,
  }
}

/** Checks an integration configuration against its provider; `previous` lets a client send a masked secret back unchanged. */
async function checkInput(db: Db, input: AddonInput, allowPrivateTargets: boolean, previous?: Record<string, string>) {
  const provider = providerNamed(input.provider)
  if (!provider) throw validationError(`Unknown provider ${input.provider}`, [{ path: 'body.provider', message: 'must be webhook' }])
  const problems: ErrorDetail[] = []
  const parameters: Record<string, string> = {}
  for (const [name, value] of Object.entries(input.parameters)) {
    const definition = provider.parameters.find((p) => p.name === name)
    if (!definition) problems.push({ path: `body.parameters.${name}`, message: `${provider.name} has no parameter ${name}` })
    else parameters[name] = definition.sensitive && value === MASK && previous?.[name] !== undefined ? previous[name]! : value
  }
  for (const p of provider.parameters) {
    if (p.required && !parameters[p.name]?.trim()) problems.push({ path: `body.parameters.${p.name}`, message: `${p.name} is required` })
  }
  if (parameters.url) {
    const problem = webhookUrlProblem(parameters.url, allowPrivateTargets)
    if (problem) problems.push({ path: 'body.parameters.url', message: problem })
  }
  if (parameters.bodyTemplate) {
    try {
      Mustache.parse(parameters.bodyTemplate)
    } catch (error) {
      problems.push({ path: 'body.parameters.bodyTemplate', message: `bodyTemplate is not a valid Mustache template: ${(error as Error).message}` })
    }
  }
  const headers = parseCustomHeaders(parameters.customHeaders)
  if (headers.problem) problems.push({ path: 'body.parameters.customHeaders', message: headers.problem })
  const environments = (input.environments ?? []).filter((e) => e !== '*')
  const unknown = await unknownEnvironments(db, environments)
  for (const name of unknown) problems.push({ path: 'body.environments', message: `environment ${name} does not exist` })
  if (problems.length > 0) throw validationError(`Invalid integration: ${problems.map((p) => p.message).join('; ')}`, problems)
  return {
    provider: input.provider,
    description: input.description ?? null,
    enabled: input.enabled,
    parameters,
    events: [...new Set(input.events)],
    projects: [...new Set(input.projects ?? [])],
    environments: [...new Set(input.environments ?? [])],
  }
}

export async function listAddons(db: Db) {
  return (await db.select().from(addons).orderBy(asc(addons.id))).map(addonView)
}

export async function getAddon(db: Db, id: number) {
  const [row] = await db.select().from(addons).where(eq(addons.id, id))
  if (!row) throw notFound(`Could not find integration ${id}`)
  return row
}

export async function createAddon(db: Db, caller: Author, input: AddonInput, allowPrivateTargets: boolean) {
  const { actor, now } = caller
  const values = await checkInput(db, input, allowPrivateTargets)
  return db.transaction(async (tx) => {
    const [row] = await tx.insert(addons).values({ ...values, createdAt: now }).returning()
    const view = addonView(row!)
    await recordEvents(tx, actor, now, [{ type: 'addon-config-created', data: view }])
    return view
  })
}

export async function updateAddon(db: Db, caller: Author, id: number, input: AddonInput, allowPrivateTargets: boolean) {
  const { actor, now } = caller
  return db.transaction(async (tx) => {
    const [before] = await tx.select().from(addons).where(eq(addons.id, id)).for('update')
    if (!before) throw notFound(`Could not find integration ${id}`)
    if (before.provider !== input.provider) throw validationError('The provider of an integration cannot be changed: create a new one')
    const values = await checkInput(tx, input, allowPrivateTargets, before.parameters as Record<string, string>)
    const [after] = await tx.update(addons).set(values).where(eq(addons.id, id)).returning()
    const view = addonView(after!)
    await recordEvents(tx, actor, now, [{ type: 'addon-config-updated', data: view, preData: addonView(before) }])
    return view
  })
}

export async function deleteAddon(db: Db, caller: Author, id: number) {
  const { actor, now } = caller
  await db.transaction(async (tx) => {
    const [before] = await tx.delete(addons).where(eq(addons.id, id)).returning()
    if (!before) throw notFound(`Could not find integration ${id}`)
    await recordEvents(tx, actor, now, [{ type: 'addon-config-deleted', preData: addonView(before) }])
  })
}

/** GET /api/admin/addons/{id}/events: what the integration did with events, newest first. */
export async function listIntegrationEvents(db: Db, id: number, page: { limit: number; offset: number }) {
  const addon = await getAddon(db, id)
  const rows = await db
    .select()
    .from(integrationEvents)
    .where(and(eq(integrationEvents.integrationId, id)))
    .orderBy(desc(integrationEvents.id))
    .limit(page.limit)
    .offset(page.offset)
  return rows.map((r) => ({
    id: String(r.id),
    integrationId: r.integrationId,
    createdAt: r.createdAt.toISOString(),
    state: r.state as 'success' | 'failed' | 'successWithErrors',
    stateDetails: r.stateDetails,
    event: r.event as ReturnType<typeof eventView>,
    // A delivery's details name what was sent, the URL among them: masked like the parameters.
    details: maskSensitive(addon.provider, r.details as Record<string, unknown>),
  }))
}
