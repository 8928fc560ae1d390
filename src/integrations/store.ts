import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm'
import { parseMustache } from './mustache.js'
import { addons, integrationEvents, projects } from '../../schema/index.js'
import { batch, queryRows, rowText, together, untilUnchanged, type Db } from '../db.js'
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

/** The environments an integration names (`*` aside), to check they exist. */
const namedEnvironments = (input: AddonInput) => (input.environments ?? []).filter((e) => e !== '*')

/**
 * The environments and projects an integration names that do not exist. Unleash 8.2 stores any name; Flagpost refuses
 * them (a departure, see docs/ARCHITECTURE.md): an integration naming a project that does not exist yet would start
 * sending that project's events to its target the moment anyone creates a project with that id.
 */
async function unknownNames(db: Db, input: AddonInput): Promise<{ environments: string[]; projects: string[] }> {
  const named = [...new Set((input.projects ?? []).filter((p) => p !== '*'))]
  const [environments, found] = await Promise.all([
    unknownEnvironments(db, namedEnvironments(input)),
    named.length === 0 ? [] : db.select({ id: projects.id }).from(projects).where(inArray(projects.id, named)),
  ])
  const known = new Set(found.map((f) => f.id))
  return { environments, projects: named.filter((p) => !known.has(p)) }
}

/**
 * Checks an integration configuration against its provider; `unknown`: the environments it names that do not
 * exist (read by the caller, with what else its write needs); `previous` lets a client send a masked secret back
 * unchanged.
 */
function checkInput(input: AddonInput, allowPrivateTargets: boolean, unknown: { environments: string[]; projects: string[] }, previous?: Record<string, string>) {
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
      parseMustache(parameters.bodyTemplate)
    } catch (error) {
      problems.push({ path: 'body.parameters.bodyTemplate', message: `bodyTemplate is not a valid Mustache template: ${(error as Error).message}` })
    }
  }
  const headers = parseCustomHeaders(parameters.customHeaders)
  if (headers.problem) problems.push({ path: 'body.parameters.customHeaders', message: headers.problem })
  for (const name of unknown.environments) problems.push({ path: 'body.environments', message: `environment ${name} does not exist` })
  for (const name of unknown.projects) problems.push({ path: 'body.projects', message: `project ${name} does not exist` })
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

/**
 * POST /api/admin/addons: a read (the id the integration will have, and the environments it names), then one batch:
 * the integration, then its event, so that the event's deliveries see it (as it would be delivered to itself).
 */
export async function createAddon(db: Db, caller: Author, input: AddonInput, allowPrivateTargets: boolean) {
  const { actor, now } = caller
  // The event names the id the insert would generate: taken first.
  const [[taken], unknown] = await together(db, [
    (q) => queryRows<{ id: number }>(q, sql`select nextval(pg_get_serial_sequence('addons', 'id'))::int as id`),
    (q) => unknownNames(q, input),
  ])
  const id = taken!.id
  const values = checkInput(input, allowPrivateTargets, unknown)
  const [[row]] = await batch(db, [
    (q) => q.insert(addons).values({ id, ...values, createdAt: now }).returning(),
    (q) => recordEvents(q, actor, now, [{ type: 'addon-config-created', data: addonView({ id, ...values, createdAt: now }) }]),
  ])
  return addonView(row!)
}

/** The row this transaction wrote (its version's xmin is the transaction's id): what a statement after a checked change in one batch asks. */
const writtenHere = (id: number) => sql`select id from ${addons} where id = ${id} and xmin = pg_current_xact_id()::xid`

/** The integration with its snapshot (see rowText), to change it only while it is as read. */
const addonAsRead = (db: Db, id: number) => db.select({ row: addons, snapshot: rowText(addons) }).from(addons).where(eq(addons.id, id))
const unchanged = (id: number, snapshot: string) => and(eq(addons.id, id), sql`${rowText(addons)} = ${snapshot}`)

/**
 * PUT /api/admin/addons/{id}: a read (the integration and the environments named), then one batch: the change,
 * made only if the integration is still as read, then its event, written only if the change was (its deliveries
 * follow the new configuration). Tried again from a fresh read when the integration changed meanwhile.
 */
export async function updateAddon(db: Db, caller: Author, id: number, input: AddonInput, allowPrivateTargets: boolean) {
  const { actor, now } = caller
  return untilUnchanged(`Integration ${id}`, async () => {
    const [[found], unknown] = await together(db, [(q) => addonAsRead(q, id), (q) => unknownNames(q, input)])
    if (!found) throw notFound(`Could not find integration ${id}`)
    const { row: before, snapshot } = found
    if (before.provider !== input.provider) throw validationError('The provider of an integration cannot be changed: create a new one')
    const values = checkInput(input, allowPrivateTargets, unknown, before.parameters as Record<string, string>)
    const [[after]] = await batch(db, [
      (q) => q.update(addons).set(values).where(unchanged(id, snapshot)).returning(),
      (q) => recordEvents(q, actor, now, [{ type: 'addon-config-updated', data: addonView({ ...before, ...values }), preData: addonView(before) }], { alongside: [writtenHere(id)], guarded: true }),
    ])
    return after && addonView(after)
  })
}

/**
 * DELETE /api/admin/addons/{id}: a read, then the deletion and its event in one statement, made only if the
 * integration is still as read (its own deletion is not delivered to it: the outbox row goes with it).
 */
export async function deleteAddon(db: Db, caller: Author, id: number) {
  const { actor, now } = caller
  await untilUnchanged(`Integration ${id}`, async () => {
    const [found] = await addonAsRead(db, id)
    if (!found) throw notFound(`Could not find integration ${id}`)
    const { row: before, snapshot } = found
    const remove = db.delete(addons).where(unchanged(id, snapshot)).returning({ id: addons.id })
    const written = await recordEvents(db, actor, now, [{ type: 'addon-config-deleted', preData: addonView(before) }], { alongside: [remove], guarded: true })
    return written > 0 || undefined
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
