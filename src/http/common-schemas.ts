import * as z from './zod.js'

/**
 * Names that travel in URL paths, as Unleash allows them: what `encodeURIComponent` leaves unchanged (letters, digits and
 * `- _ . ! ~ * ' ( )`).
 */
export const urlFriendlyName = (what: string, max = 100) =>
  z
    .string()
    .min(1, `${what} must not be empty`)
    .max(max, `${what} must be at most ${max} characters`)
    .regex(/^[A-Za-z0-9~_.!*'()-]+$/, `${what} must be URL-friendly: letters, digits and - _ . ! ~ * ' ( ) only`)

/**
 * A name that is a segment of its routes' paths (flags, environments, signal endpoints): URL-friendly, and not `.` or
 * `..`, which a URL resolves away, so that no route could reach what is named so.
 */
export const pathSegmentName = (what: string, max = 100) => urlFriendlyName(what, max).refine((name) => name !== '.' && name !== '..', `${what} must not be . or ..`)

export const dateTime = z.iso.datetime({ offset: true })

export const projectIdParam = z.object({
  projectId: z.string().openapi({ param: { name: 'projectId', in: 'path' }, example: 'default' }),
})

/** A paging query parameter: a whole number as a string, at most `max`, `fallback` when absent. */
export const pagingParam = (what: string, max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d{1,10}$/, `${what} must be a whole number from 0`)
    .transform(Number)
    .refine((n) => n <= max, `${what} must be at most ${max}`)
    .optional()
    .transform((n) => n ?? fallback)
    .openapi({ description: `Default ${fallback}, at most ${max}` })
