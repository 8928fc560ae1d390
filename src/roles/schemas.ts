import * as z from '../http/zod.js'
import { RoleSchema } from '../users/schemas.js'

/** Custom role types, as Unleash names them: a custom root role, or a custom project role. */
export const CUSTOM_ROLE_TYPES = ['root-custom', 'custom'] as const
export type CustomRoleType = (typeof CUSTOM_ROLE_TYPES)[number]

export const AdminPermissionSchema = z
  .object({
    id: z.number().int().openapi({ description: 'The permission’s number (its place in the list: new permissions come last)' }),
    name: z.string().openapi({ example: 'UPDATE_FEATURE_ENVIRONMENT' }),
    displayName: z.string().openapi({ example: 'Enable/disable flags' }),
    type: z.enum(['root', 'project', 'environment']).openapi({ description: 'Where it applies: instance-wide, in a project, or in one environment of a project' }),
    environment: z.string().nullable().optional().openapi({ description: 'For an environment permission: the environment it applies to' }),
  })
  .openapi('adminPermissionSchema')

export const AdminPermissionsSchema = z
  .object({
    version: z.literal(1),
    permissions: z.object({
      root: z.array(AdminPermissionSchema),
      project: z.array(AdminPermissionSchema),
      environments: z.array(z.object({ name: z.string(), permissions: z.array(AdminPermissionSchema) })),
    }),
  })
  .openapi('adminPermissionsSchema')

export const RolesWithVersionSchema = z.object({ version: z.literal(1), roles: z.array(RoleSchema) }).openapi('rolesWithVersionSchema')

/** What the create and update routes answer: the role under `roles`, as Unleash does. */
export const RoleWithVersionSchema = z.object({ version: z.literal(1), roles: RoleSchema }).openapi('roleWithVersionSchema')

export const RoleWithPermissionsSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    type: z.string(),
    description: z.string().nullable(),
    permissions: z.array(AdminPermissionSchema),
  })
  .openapi('roleWithPermissionsSchema')

/** A permission a role is to hold: by name (or by number, as Unleash's project roles may), in one environment or every one. */
const PermissionRefSchema = z
  .object({
    name: z.string().max(100).optional().openapi({ example: 'UPDATE_FEATURE_ENVIRONMENT' }),
    id: z.number().int().positive().optional().openapi({ description: 'The permission’s number, instead of its name' }),
    environment: z
      .string()
      .max(100)
      .nullable()
      .optional()
      .openapi({ description: 'For an environment permission: the one environment it holds in (absent, null or empty: every environment)', example: 'production' }),
  })
  .refine((p) => p.name !== undefined || p.id !== undefined, 'a permission needs a name or an id')

export type PermissionRef = z.infer<typeof PermissionRefSchema>

const nameSchema = z.string().trim().min(1, 'name must not be empty').max(100, 'name must be at most 100 characters')
const descriptionSchema = z.string().max(1000, 'description must be at most 1000 characters').nullable().optional()
const permissionsSchema = z.array(PermissionRefSchema).max(1000, 'a role holds at most 1000 permissions').nullable().optional()

export const CreateRoleSchema = z
  .object({
    name: nameSchema.openapi({ example: 'Production releaser' }),
    description: descriptionSchema,
    type: z.enum(CUSTOM_ROLE_TYPES).optional().openapi({ description: 'root-custom: a custom root role; custom (the default): a custom project role' }),
    permissions: permissionsSchema,
  })
  .openapi('createRoleWithPermissionsSchema')

export type CreateRole = z.infer<typeof CreateRoleSchema>

export const ValidateRoleSchema = z
  .object({ name: nameSchema, description: descriptionSchema, type: z.enum(CUSTOM_ROLE_TYPES).optional(), permissions: permissionsSchema })
  .openapi('roleValidationSchema')

export const RoleIdParam = z.object({
  roleId: z
    .string()
    .regex(/^\d{1,9}$/, 'roleId must be a role id (a positive integer)')
    .openapi({ param: { name: 'roleId', in: 'path' }, example: '6' }),
})

export const ProjectRoleUsageSchema = z
  .object({
    projects: z.array(
      z.object({
        project: z.string(),
        role: z.number().int(),
        userCount: z.number().int(),
        groupCount: z.number().int(),
        serviceAccountCount: z.number().int(),
      }),
    ),
  })
  .openapi('projectRoleUsageSchema')
