import { z } from '@hono/zod-openapi'

/** Names that travel in URL paths: letters, digits and `~ _ . -`, as Unleash allows. */
export const urlFriendlyName = (what: string, max = 100) =>
  z
    .string()
    .min(1, `${what} must not be empty`)
    .max(max, `${what} must be at most ${max} characters`)
    .regex(/^[A-Za-z0-9~_.-]+$/, `${what} must be URL-friendly: letters, digits and ~ _ . - only`)

export const dateTime = z.iso.datetime({ offset: true })

export const projectIdParam = z.object({
  projectId: z.string().openapi({ param: { name: 'projectId', in: 'path' }, example: 'default' }),
})
