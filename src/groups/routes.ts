import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { CreateGroupSchema, GroupIdParam, GroupSchema, GroupsSchema, GroupWriteResponseSchema } from './schemas.js'
import { createGroup, deleteGroup, getGroup, listGroups, updateGroup } from './store.js'

const tags = ['Users']
const adminOnly = 'Needs the Admin root role (permission ADMIN).'
const membership =
  'A member holds the group’s root role and its roles in projects besides their own (the union of both), from their next request through this instance ' +
  '(and within `FLAGPOST_PRINCIPAL_TTL_SECONDS` through others).'
const body =
  '`name` (unique: 409 NameExistsError), `description`, `mappingsSSO`, `rootRole` (the id of a root role, built in or custom; null: none), `users` (`[{ user: { id } }]`, active users: 400 otherwise).'

const getGroupsRoute = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/groups',
  operationId: 'getGroups',
  tags,
  summary: 'Get every group',
  description: `Every group with its members and the projects it holds roles in. ${adminOnly}`,
  responses: { 200: { description: 'The groups', content: jsonContent(GroupsSchema) }, ...pickErrors(401, 403) },
})

const getGroupRoute = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/groups/{groupId}',
  operationId: 'getGroup',
  tags,
  summary: 'Get a group',
  description: `The group with its members and the projects it holds roles in. 404 for an unknown group. ${adminOnly}`,
  request: { params: GroupIdParam },
  responses: { 200: { description: 'The group', content: jsonContent(GroupSchema) }, ...pickErrors(400, 401, 403, 404) },
})

const createGroupRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/groups',
  operationId: 'createGroup',
  tags,
  summary: 'Create a group',
  description: `${body} ${membership} ${adminOnly} Emits \`group-created\` (data: the group, its members by id).`,
  request: { body: { required: true, content: jsonContent(CreateGroupSchema) } },
  responses: {
    201: { description: 'The group was created', headers: { location: { schema: { type: 'string' }, description: 'The location of the new group' } }, content: jsonContent(GroupWriteResponseSchema) },
    ...pickErrors(400, 401, 403, 409, 415),
  },
})

const updateGroupRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/groups/{groupId}',
  operationId: 'updateGroup',
  tags,
  summary: 'Update a group',
  description:
    `${body} The fields absent are emptied, as in Unleash, but \`users\`: absent, the members are kept; given, they become the members. 404 for an unknown group. ${membership} ${adminOnly} ` +
    'Emits `group-updated` (data and preData: the group, its members by id), as Unleash does for members changed here; `group-user-added` and `group-user-removed` ' +
    'are written when a user joins or leaves a group otherwise: by single sign-on\'s group sync (`mappingsSSO`), and a deleted user leaving their groups.',
  request: { params: GroupIdParam, body: { required: true, content: jsonContent(CreateGroupSchema) } },
  responses: { 200: { description: 'The group was updated', content: jsonContent(GroupWriteResponseSchema) }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const deleteGroupRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/groups/{groupId}',
  operationId: 'deleteGroup',
  tags,
  summary: 'Delete a group',
  description: `The group goes with its membership and its roles in projects: its members lose what they held through it. An unknown group is a 200 that writes nothing, as in Unleash. ${adminOnly} Emits \`group-deleted\` (preData: the group, its members by id).`,
  request: { params: GroupIdParam },
  responses: { 200: { description: 'The group was deleted' }, ...pickErrors(400, 401, 403) },
})

// The path pattern allows at most 9 digits, so the number is always a valid Postgres integer.
const groupId = (id: string) => Number(id)

export const groupRoutes = createRouter()
  .openapi(getGroupsRoute, async (c) => c.json(await listGroups(c.var.db), 200))
  .openapi(getGroupRoute, async (c) => c.json(await getGroup(c.var.db, groupId(c.req.valid('param').groupId)), 200))
  .openapi(createGroupRoute, async (c) => {
    const group = await createGroup(c.var.db, c.var.caller, c.req.valid('json'))
    return c.json(group, 201, { Location: `/api/admin/groups/${group.id}` })
  })
  .openapi(updateGroupRoute, async (c) => c.json(await updateGroup(c.var.db, c.var.caller, groupId(c.req.valid('param').groupId), c.req.valid('json')), 200))
  .openapi(deleteGroupRoute, async (c) => {
    await deleteGroup(c.var.db, c.var.caller, groupId(c.req.valid('param').groupId))
    return c.body(null, 200)
  })
