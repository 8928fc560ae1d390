import { adminRoute, createRouter, jsonContent, serializedJson } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { hiddenProjectsOf } from '../projects/visibility.js'
import { FeatureSearchQuerySchema, SearchFeaturesSchema } from './search-schemas.js'
import { searchFeaturesJson } from './search-cache.js'

const searchFeaturesRoute = adminRoute({
  method: 'get',
  path: '/api/admin/search/features',
  operationId: 'searchFeatures',
  tags: ['Search'],
  summary: 'Search and filter feature flags',
  description:
    'Live flags (archived ones with `archived=IS:true` or `lifecycle` naming `archived`) matching every filter given, a page of them (`limit` default 50, at most 1000) ' +
    'in the order asked for, and `total`, every match. Only flags of projects the caller may read (a private project\'s to its members and those who see every project). ' +
    'A filter not in its documented format, an unknown state or lifecycle stage, a tag that is not `type:value` or a createdBy that is not a user id is a 400 naming the parameter.',
  request: { query: FeatureSearchQuerySchema },
  responses: { 200: { description: 'The matching flags', content: jsonContent(SearchFeaturesSchema) }, ...pickErrors(400, 401, 403) },
})

export const flagSearchRoutes = createRouter().openapi(searchFeaturesRoute, async (c) =>
  serializedJson(c, await searchFeaturesJson(c.var.db, c.var.flagSearches, c.req.valid('query'), { principal: c.var.caller.key, hidden: await hiddenProjectsOf(c) }, c.var.caller.now)),
)
