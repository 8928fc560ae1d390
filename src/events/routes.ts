import * as z from '../http/zod.js'
import { adminRoute, createRouter, jsonContent, serializedJson } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { EventSearchQuerySchema, EventSearchResponseSchema, FeatureEventsQuerySchema, FeatureEventsSchema } from './schemas.js'
import { featureEventsJson, searchEventsJson } from './search.js'
import { eventAccess } from './access.js'
import { hiddenProjectsOf } from '../projects/visibility.js'
import type { AppContext } from '../http/context.js'

const READ_RULE =
  "Events are read as their project is (a private project's only by its members and those who see every project; for anyone else they do not exist). " +
  'Events about users, tokens, roles, sign-in and integration settings (`user-*`, `pat-*`, `api-token-*`, `setting-*`, `addon-config-*`…) are read only by admins; ' +
  'other events without a project (environments, global segments) by every caller.'

const getEventsForToggle = adminRoute({
  method: 'get',
  path: '/api/admin/events/{featureName}',
  operationId: 'getEventsForToggle',
  tags: ['Events'],
  summary: 'Get the events of a flag',
  description:
    'Newest first; `totalEvents` counts every event of the flag the caller may read. An unknown flag (or one of a private project the caller may not read) gives an empty list (200), not 404. `limit` default 50, at most 1000; `offset` default 0. ' +
    READ_RULE,
  request: {
    params: z.object({ featureName: z.string().openapi({ param: { name: 'featureName', in: 'path' } }) }),
    query: FeatureEventsQuerySchema,
  },
  responses: { 200: { description: 'The events', content: jsonContent(FeatureEventsSchema) }, ...pickErrors(400, 401, 403) },
})

const searchEventsRoute = adminRoute({
  method: 'get',
  path: '/api/admin/search/events',
  operationId: 'searchEvents',
  tags: ['Events'],
  summary: 'Search events',
  description:
    'Events matching every given filter, newest first (created_at, then id), with `total` = all matches the caller may read. A parameter that does not match its documented format, an unknown event type, ' +
    'a negative offset or a limit above 1000 is a 400 ValidationError naming the parameter. ' +
    READ_RULE,
  request: { query: EventSearchQuerySchema },
  responses: { 200: { description: 'The matching events', content: jsonContent(EventSearchResponseSchema) }, ...pickErrors(400, 401, 403) },
})

// c.get, not c.var, on these hot reads: c.var copies every variable of the request into a new object on each read.
const accessOf = async (c: AppContext) => eventAccess(c.get('principal'), await hiddenProjectsOf(c))

export const eventRoutes = createRouter()
  .openapi(getEventsForToggle, async (c) =>
    serializedJson(c, await featureEventsJson(c.get('db'), c.get('eventPages'), c.req.valid('param').featureName, c.req.valid('query'), await accessOf(c), c.get('caller').now)),
  )
  .openapi(searchEventsRoute, async (c) => serializedJson(c, await searchEventsJson(c.get('db'), c.get('eventPages'), c.req.valid('query'), await accessOf(c), c.get('caller').now)))
