import { adminRoute, createRouter, jsonContent, serializedJson } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { projectIdParam } from '../http/common-schemas.js'
import { Permission } from '../core/permissions.js'
import * as z from '../http/zod.js'

import { CreateStrategySchema } from '../strategies/schemas.js'
import { AddProjectEnvironmentSchema, CreateProjectSchema, ProjectCreatedSchema, ProjectOverviewSchema, ProjectSummarySchema, ProjectsSchema, UpdateProjectSchema } from './schemas.js'
import { addEnvironmentToProject, createProject, removeEnvironmentFromProject, listProjects, setDefaultStrategy, updateProject } from './store.js'
import { projectOverviewJson, projectSummaryJson } from './overview.js'
import { hiddenProjectsOf } from './visibility.js'
import { protectedEnvironmentsCheck, protectionWeakeningCheck, requireDirectChangeAllowed } from '../change-requests/guard.js'
import { archiveProject, deleteProject, reviveProject } from './lifecycle.js'

const getProjects = adminRoute({
  method: 'get',
  path: '/api/admin/projects',
  operationId: 'getProjects',
  tags: ['Projects'],
  summary: 'Get a list of all projects',
  description:
    'Every project that is not archived (with `archived=true`: every archived project instead, as in Unleash), ordered by name, with the environments enabled in it. Private projects are listed only for their members and ' +
    'for callers who see every project (admins, admin tokens, root roles other than Viewer), as in Unleash; for anyone else they do not exist, and every ' +
    'route under `/api/admin/projects/{projectId}` answers 404 for them.',
  request: { query: z.object({ archived: z.enum(['true', 'false']).optional().openapi({ param: { name: 'archived', in: 'query' }, description: '`true`: the archived projects only' }) }) },
  responses: {
    200: { description: 'The projects', content: jsonContent(ProjectsSchema) },
    ...pickErrors(401, 403),
  },
})

const createProjectRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.CREATE_PROJECT },
  path: '/api/admin/projects',
  operationId: 'createProject',
  tags: ['Projects'],
  summary: 'Create a project',
  description:
    'Creates a project. Without an `id`, one is made from the name (lower-case slug, `-1`, `-2`… on collision). ' +
    'Without `environments`, every non-deprecated environment is enabled. Environments named in `changeRequestEnvironments` ' +
    'are enabled too, with change requests on and `requiredApprovals` clamped to 1..10. 400 names unknown environments; ' +
    '409 NameExistsError for an existing id. Emits `project-created`; a user who creates a project becomes its Owner (`project-access-added`).',
  request: { body: { required: true, content: jsonContent(CreateProjectSchema) } },
  responses: {
    201: {
      description: 'The project was created',
      headers: { location: { schema: { type: 'string' }, description: 'The location of the new project' } },
      content: jsonContent(ProjectCreatedSchema),
    },
    ...pickErrors(400, 401, 403, 409, 415),
  },
})

const addEnvironmentToProjectRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_PROJECT, project: 'projectId' },
  path: '/api/admin/projects/{projectId}/environments',
  operationId: 'addEnvironmentToProject',
  tags: ['Projects'],
  summary: 'Add an environment to a project',
  description:
    'Enables an existing environment in the project. 404 for an unknown project or environment, 409 when it is already enabled. ' +
    'An environment that required change requests when it was removed from the project comes back requiring them, with its required approvals, unless `changeRequestsEnabled` is `false`, ' +
    'which lifts that protection and so needs SKIP_CHANGE_REQUEST there (403 otherwise). Emits `project-environment-added`.',
  request: { params: projectIdParam, body: { required: true, content: jsonContent(AddProjectEnvironmentSchema) } },
  responses: {
    200: { description: 'The environment was added to the project' },
    ...pickErrors(400, 401, 403, 404, 409, 415),
  },
})

const removeEnvironmentFromProjectRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_PROJECT, project: 'projectId', environment: 'environment' },
  path: '/api/admin/projects/{projectId}/environments/{environment}',
  operationId: 'removeEnvironmentFromProject',
  tags: ['Projects'],
  summary: 'Remove an environment from a project',
  description:
    'Takes the environment out of the project, with the configuration of the project’s flags in it (switches, strategies, variants: SDKs of it are served them off; adding it back starts from off, requiring change requests again if it did). ' +
    '400 for the project’s last environment, 404 for an unknown project or an environment it does not have. Needs SKIP_CHANGE_REQUEST where it requires change requests. Emits `project-environment-removed`.',
  request: { params: projectIdParam.extend({ environment: z.string().openapi({ param: { name: 'environment', in: 'path' } }) }) },
  responses: { 200: { description: 'The environment was removed from the project' }, ...pickErrors(400, 401, 403, 404) },
})

const getProject = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}',
  operationId: 'getProject',
  deprecated: true,
  tags: ['Projects'],
  summary: 'Project overview (deprecated)',
  description:
    'The project with every live flag, its environments (with change-request setting and default strategy), members, health and statistics. ' +
    'health = round(100 − % stale − % potentially stale) over live flags (100 with none). Statistics: current window = the last 30 days, past window = the 30 before; ' +
    'avgTimeToProdCurrentWindow = mean days from creation to first enabling in a production-type environment, for flags created in the current window (0 when none).' +
    ' 404 for an unknown project, and for a private project the caller may not read (not a member, admin, admin token or root role other than Viewer): for them it does not exist, as in Unleash.',
  request: { params: projectIdParam },
  responses: { 200: { description: 'The project overview', content: jsonContent(ProjectOverviewSchema) }, ...pickErrors(401, 403, 404) },
})

const getProjectOverview = adminRoute({
  method: 'get',
  path: '/api/admin/projects/{projectId}/overview',
  operationId: 'getProjectOverview',
  tags: ['Projects'],
  summary: 'Get an overview of a project',
  description:
    'The project without its flags (those are the flag search\'s, `GET /api/admin/search/features?project=IS:<id>`): statistics, health (and `technicalDebt`, 100 − health), members, ' +
    'environments, live flags per type and the onboarding status, as in Unleash. Answers for an archived project too, with its `archivedAt`, as Unleash shows an archived project\'s page. ' +
    '404 for an unknown project, and for a private project the caller may not read.',
  request: { params: projectIdParam },
  responses: { 200: { description: 'The project overview', content: jsonContent(ProjectSummarySchema) }, ...pickErrors(401, 403, 404) },
})

const updateProjectRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_PROJECT, project: 'projectId' },
  path: '/api/admin/projects/{projectId}',
  operationId: 'updateProject',
  tags: ['Projects'],
  summary: 'Update a project',
  description: 'Sets name, description, mode, defaultStickiness, featureLimit and featureNaming (the pattern must be valid RE2 syntax, as REGEX constraints, and is matched in linear time; the example must match it); fields left out keep their value. Emits `project-updated`.',
  request: { params: projectIdParam, body: { required: true, content: jsonContent(UpdateProjectSchema) } },
  responses: { 200: { description: 'The project was updated' }, ...pickErrors(400, 401, 403, 404, 415) },
})

const deleteProjectRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.DELETE_PROJECT, project: 'projectId' },
  path: '/api/admin/projects/{projectId}',
  operationId: 'deleteProject',
  tags: ['Projects'],
  summary: 'Delete a project',
  description:
    'Deletes the project (archived or not) for good, as in Unleash: only with no live flag and no open change request (409 otherwise), never the `default` project (409). ' +
    'Its archived flags are deleted (`feature-deleted` each), and its segments (`segment-deleted`), API tokens for it alone (`api-token-deleted`), environments, members, ' +
    'favorites and closed change requests; tokens for several projects lose it, and so do integrations naming it (`addon-config-updated` each); one that named it alone is deleted (`addon-config-deleted`), ' +
    'since naming no project means every one: re-enabling it would widen it to every project. Emits `project-deleted`; events stay, with the deleted project: a project made again with its id does not show a private one’s events ' +
    'to anyone but those who see every project, nor count them in its activity.',
  request: { params: projectIdParam },
  responses: { 200: { description: 'The project was deleted' }, ...pickErrors(401, 403, 404, 409) },
})

const archiveProjectRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.DELETE_PROJECT, project: 'projectId' },
  path: '/api/admin/projects/archive/{projectId}',
  operationId: 'archiveProject',
  tags: ['Projects'],
  summary: 'Archive a project',
  description:
    'Archives the project, as in Unleash: only with no live flag (409), never the `default` project (409), nor with an open change request (409). An archived project is listed only with `archived=true`, ' +
    'serves nothing to SDKs or the playground, and every write to it or its flags answers 404, as for an unknown project. Archiving an archived one changes nothing. Emits `project-archived`.',
  request: { params: projectIdParam },
  responses: { 200: { description: 'The project is archived' }, ...pickErrors(401, 403, 404, 409) },
})

const reviveProjectRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.UPDATE_PROJECT, project: 'projectId' },
  path: '/api/admin/projects/revive/{projectId}',
  operationId: 'reviveProject',
  tags: ['Projects'],
  summary: 'Revive an archived project',
  description: 'Takes the project out of the archive (its flags stay archived). Reviving a live project changes nothing. Emits `project-revived`.',
  request: { params: projectIdParam },
  responses: { 200: { description: 'The project is live' }, ...pickErrors(401, 403, 404) },
})

const environmentParams = projectIdParam.extend({ environment: z.string().openapi({ param: { name: 'environment', in: 'path' } }) })
const defaultStrategyRoute = (method: 'put' | 'post') =>
  adminRoute({
    method,
    // The default strategy is what an approved change request switching a flag on adds when it is applied: changing it there is a direct change.
    'x-change-requests': 'guarded',
    'x-permission': { name: Permission.UPDATE_PROJECT, project: 'projectId', environment: 'environment' },
    path: '/api/admin/projects/{projectId}/environments/{environment}/default-strategy',
    operationId: method === 'post' ? 'addDefaultStrategyToProjectEnvironment' : 'setDefaultStrategyOfProjectEnvironment',
    tags: ['Projects'],
    summary: 'Set the default strategy of a project environment',
    description: 'The strategy a flag gets when it is enabled in this environment without any enabled strategy (validated like any strategy; flexibleRollout groupId defaults to the flag name). POST (as Unleash) and PUT do the same. ' +
      'Where the project requires change requests in the environment, needs SKIP_CHANGE_REQUEST there (403 otherwise): a change request that switches a flag on adds this strategy when applied, so changing it would change what reviewers approved. Emits `default-strategy-updated`.',
    request: { params: environmentParams, body: { required: true, content: jsonContent(CreateStrategySchema) } },
    responses: { 200: { description: 'The default strategy now set', content: jsonContent(CreateStrategySchema) }, ...pickErrors(400, 401, 403, 404, 415) },
  })

export const projectRoutes = createRouter()
  .openapi(getProjects, async (c) => c.json({ version: 1, projects: await listProjects(c.var.db, await hiddenProjectsOf(c), c.req.valid('query').archived === 'true') }, 200))
  .openapi(createProjectRoute, async (c) => {
    const project = await createProject(c.var.db, c.var.caller, c.req.valid('json'))
    return c.json(project, 201, { Location: `/api/admin/projects/${encodeURIComponent(project.id)}` })
  })
  .openapi(addEnvironmentToProjectRoute, async (c) => {
    const { projectId } = c.req.valid('param')
    await addEnvironmentToProject(c.var.db, c.var.caller, projectId, c.req.valid('json'), protectionWeakeningCheck(c, projectId))
    return c.body(null, 200)
  })
  .openapi(removeEnvironmentFromProjectRoute, async (c) => {
    const { projectId, environment } = c.req.valid('param')
    await removeEnvironmentFromProject(c.var.db, c.var.caller, projectId, environment, protectedEnvironmentsCheck(c))
    return c.body(null, 200)
  })
  .openapi(getProject, async (c) => {
    const { projectId } = c.req.valid('param')
    return serializedJson(c, await projectOverviewJson(c.var.db, c.var.overviews, projectId, c.var.caller.key, c.var.caller.now))
  })
  .openapi(getProjectOverview, async (c) => serializedJson(c, await projectSummaryJson(c.var.db, c.var.overviews, c.req.valid('param').projectId, c.var.caller.key, c.var.caller.now)))
  .openapi(updateProjectRoute, async (c) => {
    const { projectId } = c.req.valid('param')
    await updateProject(c.var.db, c.var.caller, projectId, c.req.valid('json'))
    return c.body(null, 200)
  })
  .openapi(deleteProjectRoute, async (c) => {
    await deleteProject(c.var.db, c.var.caller, c.req.valid('param').projectId)
    return c.body(null, 200)
  })
  .openapi(archiveProjectRoute, async (c) => {
    await archiveProject(c.var.db, c.var.caller, c.req.valid('param').projectId)
    return c.body(null, 200)
  })
  .openapi(reviveProjectRoute, async (c) => {
    await reviveProject(c.var.db, c.var.caller, c.req.valid('param').projectId)
    return c.body(null, 200)
  })
  .openapi(defaultStrategyRoute('put'), async (c) => {
    const { projectId, environment } = c.req.valid('param')
    await requireDirectChangeAllowed(c, projectId, environment)
    return c.json(await setDefaultStrategy(c.var.db, c.var.caller, projectId, environment, c.req.valid('json')), 200)
  })
  .openapi(defaultStrategyRoute('post'), async (c) => {
    const { projectId, environment } = c.req.valid('param')
    await requireDirectChangeAllowed(c, projectId, environment)
    return c.json(await setDefaultStrategy(c.var.db, c.var.caller, projectId, environment, c.req.valid('json')), 200)
  })
