import * as z from '../http/zod.js'

const dateTimeText = z.string().openapi({ format: 'date-time' })

export const CreateGroupSchema = z
  .object({
    name: z.string().trim().min(1, 'Group name cannot be empty').max(100, 'name must be at most 100 characters').openapi({ example: 'DX team' }),
    description: z.string().max(1000, 'description must be at most 1000 characters').nullable().optional(),
    mappingsSSO: z
      .array(z.string().trim().min(1, 'an SSO group ID must not be empty').max(255, 'an SSO group ID must be at most 255 characters'))
      .max(100, 'a group has at most 100 SSO group IDs')
      .optional()
      .openapi({
        description:
          "The provider's group names (or ids) that map to this group: with group syncing on (OIDC settings), a user signing in with one of them joins it, and leaves it once they have none (unless an admin made them a member). Names match exactly; a name given twice is kept once",
      }),
    rootRole: z
      .number()
      .int()
      .positive()
      .nullable()
      .optional()
      .openapi({ description: 'A root role (built in or custom) every member holds besides their own; null or absent: none', example: 3 }),
    users: z
      .array(z.object({ user: z.object({ id: z.number().int().positive() }) }))
      .max(1000, 'a group has at most 1000 users')
      .optional()
      .openapi({ description: 'The members, by user id' }),
  })
  .openapi('createGroupSchema')

export type CreateGroup = z.infer<typeof CreateGroupSchema>

/** A group member as listings show them. */
export const GroupUserSchema = z
  .object({
    joinedAt: dateTimeText,
    createdBy: z.string().nullable(),
    user: z.object({
      id: z.number().int(),
      name: z.string().nullable(),
      username: z.string().nullable(),
      email: z.string().nullable(),
      imageUrl: z.string(),
    }),
  })
  .openapi('groupUserModelSchema')

const groupFields = {
  id: z.number().int(),
  name: z.string(),
  description: z.string().nullable(),
  mappingsSSO: z.array(z.string()),
  rootRole: z.number().int().nullable(),
  createdBy: z.string().nullable(),
  createdAt: dateTimeText.nullable(),
  projects: z.array(z.string()).openapi({ description: 'The projects where the group holds a role' }),
  userCount: z.number().int(),
  scimId: z.string().nullable().openapi({ description: 'Always null: Flagpost has no SCIM' }),
}

export const GroupSchema = z.object({ ...groupFields, users: z.array(GroupUserSchema) }).openapi('groupSchema')
export const GroupWriteResponseSchema = z.object(groupFields).openapi('groupWriteResponseSchema')
export const GroupsSchema = z.object({ groups: z.array(GroupSchema) }).openapi('groupsSchema')

export const GroupIdParam = z.object({
  groupId: z
    .string()
    .regex(/^\d{1,9}$/, 'groupId must be a group id (a positive integer)')
    .openapi({ param: { name: 'groupId', in: 'path' }, example: '1' }),
})

export const UsersGroupsBaseSchema = z
  .object({
    users: z.array(
      z.object({
        id: z.number().int(),
        name: z.string().nullable(),
        username: z.string().nullable(),
        email: z.string().nullable(),
        imageUrl: z.string(),
        accountType: z.enum(['User', 'Service Account']),
      }),
    ),
    groups: z.array(z.object({ id: z.number().int(), name: z.string(), description: z.string().nullable(), rootRole: z.number().int().nullable(), userCount: z.number().int() })),
  })
  .openapi('usersGroupsBaseSchema')
