import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { actorOf } from '../http/auth.js'
import { projectIdParam } from '../http/common-schemas.js'
import { Permission, requirePermission } from '../http/permissions.js'
import { AddProjectEnvironmentSchema, CreateProjectSchema, ProjectCreatedSchema, ProjectsSchema } from './schemas.js'
import { addEnvironmentToProject, createProject, listProjects } from './store.js'

const getProjects = adminRoute({
  method: 'get',
  path: '/api/admin/projects',
  operationId: 'getProjects',
  tags: ['Projects'],
  summary: 'Get a list of all projects',
  description: 'Every project that is not archived, ordered by name, with the environments enabled in it.',
  responses: {
    200: { description: 'The projects', content: jsonContent(ProjectsSchema) },
    ...pickErrors(401, 403),
  },
})

const createProjectRoute = adminRoute({
  method: 'post',
  path: '/api/admin/projects',
  operationId: 'createProject',
  tags: ['Projects'],
  summary: 'Create a project',
  description:
    'Creates a project. Without an `id`, one is made from the name (lower-case slug, `-1`, `-2`… on collision). ' +
    'Without `environments`, every non-deprecated environment is enabled. Environments named in `changeRequestEnvironments` ' +
    'are enabled too, with change requests on and `requiredApprovals` clamped to 1..10. 400 names unknown environments; ' +
    '409 NameExistsError for an existing id. Emits `project-created`.',
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
  path: '/api/admin/projects/{projectId}/environments',
  operationId: 'addEnvironmentToProject',
  tags: ['Projects'],
  summary: 'Add an environment to a project',
  description: 'Enables an existing environment in the project. 404 for an unknown project or environment, 409 when it is already enabled. Emits `project-environment-added`.',
  request: { params: projectIdParam, body: { required: true, content: jsonContent(AddProjectEnvironmentSchema) } },
  responses: {
    200: { description: 'The environment was added to the project' },
    ...pickErrors(400, 401, 403, 404, 409, 415),
  },
})

export const projectRoutes = createRouter()
  .openapi(getProjects, async (c) => c.json({ version: 1, projects: await listProjects(c.var.db) }, 200))
  .openapi(createProjectRoute, async (c) => {
    requirePermission(c.var.principal, Permission.CREATE_PROJECT)
    const project = await createProject(c.var.db, actorOf(c.var.principal), c.var.clock(), c.req.valid('json'))
    return c.json(project, 201, { Location: `/api/admin/projects/${encodeURIComponent(project.id)}` })
  })
  .openapi(addEnvironmentToProjectRoute, async (c) => {
    const { projectId } = c.req.valid('param')
    requirePermission(c.var.principal, Permission.UPDATE_PROJECT, { project: projectId })
    await addEnvironmentToProject(c.var.db, actorOf(c.var.principal), c.var.clock(), projectId, c.req.valid('json'))
    return c.body(null, 200)
  })
