import * as z from '../http/zod.js'

export const PersonalDashboardSchema = z
  .object({
    admins: z
      .array(
        z.object({
          id: z.number().int(),
          name: z.string().optional(),
          username: z.string().optional(),
          imageUrl: z.string().optional(),
          email: z.string().optional(),
        }),
      )
      .openapi({ description: 'Active users with the Admin root role' }),
    projectOwners: z
      .array(
        z.object({
          ownerType: z.enum(['user']),
          name: z.string().openapi({ description: 'The name, else the username, else the e-mail' }),
          imageUrl: z.string().nullable(),
          email: z.string().nullable(),
        }),
      )
      .openapi({ description: 'Owners of the projects visible to the caller, each once: users holding Owner in one, and the members of groups holding it' }),
    projects: z
      .array(
        z.object({
          id: z.string(),
          name: z.string(),
          health: z.number().int().min(0).max(100),
          memberCount: z.number().int(),
          featureCount: z.number().int(),
          favorite: z.boolean().openapi({ description: 'Whether the caller favorited the project (Flagpost; Unleash does not say)' }),
        }),
      )
      .openapi({ description: 'Live projects where the caller has a role, or that they favorited, by name' }),
    flags: z
      .array(
        z.object({
          name: z.string(),
          project: z.string(),
          type: z.string(),
          favorite: z.boolean().openapi({ description: 'Whether the caller favorited the flag; false for one they only created (Flagpost; Unleash does not say)' }),
        }),
      )
      .openapi({ description: 'Live flags the caller created or favorited, newest first, at most 100' }),
  })
  .openapi('personalDashboardSchema')
