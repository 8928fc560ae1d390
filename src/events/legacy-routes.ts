import * as z from '../http/zod.js'
import { and, eq, isNotNull, sql } from 'drizzle-orm'
import { adminRoute, createRouter, jsonContent, serializedJson } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { events, users } from '../../schema/index.js'
import { hiddenProjectsOf } from '../projects/visibility.js'
import type { AppContext } from '../http/context.js'
import { eventAccess } from './access.js'
import { EventSchema } from './schemas.js'
import { searchEventsJson } from './search.js'

/** How many of the newest events the legacy list answers, as Unleash's. */
const LEGACY_PAGE = 100

const EventsSchema = z.object({ version: z.number().int(), events: z.array(EventSchema), totalEvents: z.number().int() }).openapi('eventsSchema')
const EventCreatorsSchema = z.array(z.object({ id: z.number().int(), name: z.string() })).openapi('eventCreatorsSchema')

const getEventsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/events',
  operationId: 'getEvents',
  tags: ['Events'],
  summary: 'Get the most recent events (deprecated)',
  description:
    `The ${LEGACY_PAGE} newest events, of \`project\` when given, and \`totalEvents\` matching; the same read as the event search (\`/api/admin/search/events\`), with its rules: ` +
    "a private project's events reach only those who may read the project, and account and credential events only admins.",
  request: { query: z.object({ project: z.string().min(1).max(100).optional() }) },
  responses: { 200: { description: 'The events', content: jsonContent(EventsSchema) }, ...pickErrors(400, 401, 403) },
})

const getEventCreatorsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/event-creators',
  operationId: 'getEventCreators',
  tags: ['Events'],
  summary: 'Get event creators',
  description:
    'The users who made events the caller may read (their name, else username, else e-mail, as Unleash), by id. Changes made with a token name no user and are not listed.',
  responses: { 200: { description: 'The event creators', content: jsonContent(EventCreatorsSchema) }, ...pickErrors(401, 403) },
})

const accessOf = async (c: AppContext) => eventAccess(c.var.principal, await hiddenProjectsOf(c))

export const legacyEventRoutes = createRouter()
  .openapi(getEventsRoute, async (c) => {
    const { project } = c.req.valid('query')
    const json = await searchEventsJson(c.var.db, c.var.eventPages, { project: project === undefined ? undefined : `IS:${project}`, offset: 0, limit: LEGACY_PAGE }, await accessOf(c), c.var.caller.now)
    // The search's `{"events":[…],"total":N}` in the legacy list's names.
    const legacy = `{"version":1,${json.slice(1).replace(/,"total":(\d+)}$/, ',"totalEvents":$1}')}`
    return serializedJson(c, legacy)
  })
  .openapi(getEventCreatorsRoute, async (c) => {
    const access = await accessOf(c)
    const rows = await c.var.db
      .selectDistinct({ id: users.id, name: sql<string>`coalesce(nullif(${users.name}, ''), nullif(${users.username}, ''), ${users.email}, '')` })
      .from(events)
      .innerJoin(users, eq(users.id, events.createdByUserId))
      .where(and(isNotNull(events.createdByUserId), access.condition))
      .orderBy(users.id)
    return c.json(rows, 200)
  })
