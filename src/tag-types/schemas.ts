import * as z from '../http/zod.js'

const COLOR = /^#[0-9A-Fa-f]{6}$/
const color = z.string().regex(COLOR, 'color must be a hexadecimal color code such as #FFFFFF')

export const TagTypeSchema = z
  .object({
    name: z.string().openapi({ example: 'color' }),
    description: z.string().optional(),
    icon: z.string().nullable().optional(),
    color: z.string().nullable().optional(),
  })
  .openapi('tagTypeSchema')
export type TagType = z.infer<typeof TagTypeSchema>

/** What creating (or validating) a tag type takes: a URL-friendly name of 2 to 50 characters, as Unleash's tag types. */
export const TagTypeInputSchema = z
  .object({
    name: z
      .string()
      .trim()
      .min(2, 'tag type name must be 2 to 50 characters')
      .max(50, 'tag type name must be 2 to 50 characters')
      .regex(/^[A-Za-z0-9._~-]+$/, 'tag type name must be URL-friendly (letters, digits, . _ ~ -)')
      // A path segment: `..` would name no tag type in a URL, so it could never be read, changed or deleted.
      .refine((name) => name !== '..', 'tag type name must not be ..')
      .openapi({ example: 'color' }),
    description: z.string().max(10_000).optional(),
    icon: z.string().max(100).nullable().optional(),
    color: color.nullable().optional(),
  })
  .openapi('createTagTypeSchema')
export type TagTypeInput = z.infer<typeof TagTypeInputSchema>

export const UpdateTagTypeSchema = z
  .object({
    description: z.string().max(10_000).optional(),
    icon: z.string().max(100).nullable().optional(),
    color: color.nullable().optional(),
  })
  .openapi('updateTagTypeSchema')
export type UpdateTagType = z.infer<typeof UpdateTagTypeSchema>

export const TagTypesSchema = z.object({ version: z.number().int(), tagTypes: z.array(TagTypeSchema) }).openapi('tagTypesSchema')
export const ValidateTagTypeSchema = z.object({ valid: z.boolean(), tagType: TagTypeSchema }).openapi('validateTagTypeSchema')

export const tagTypeNameParam = z.object({ name: z.string().openapi({ param: { name: 'name', in: 'path' }, example: 'simple' }) })
