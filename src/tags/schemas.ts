import * as z from '../http/zod.js'
import { TagInputSchema, TagSchema } from '../flags/schemas.js'

export { TagInputSchema, TagSchema }
export type TagInput = z.infer<typeof TagInputSchema>
export type Tag = z.infer<typeof TagSchema>

export const TagsSchema = z.object({ version: z.number().int(), tags: z.array(TagSchema) }).openapi('tagsSchema')

export const featureNameParam = z.object({
  featureName: z.string().openapi({ param: { name: 'featureName', in: 'path' } }),
})

export const featureTagParams = featureNameParam.extend({
  type: z.string().openapi({ param: { name: 'type', in: 'path' }, example: 'simple' }),
  value: z.string().openapi({ param: { name: 'value', in: 'path' } }),
})

const tagPart = (what: string) => z.string().trim().min(2, `tag ${what} must be 2 to 50 characters`).max(50, `tag ${what} must be 2 to 50 characters`)

export const CreateTagSchema = z
  .object({
    value: tagPart('value').openapi({ description: 'Trimmed; 2 to 50 characters' }),
    type: tagPart('type').openapi({ description: 'An existing tag type' }),
    color: z.string().regex(/^#[0-9A-Fa-f]{6}$/).nullable().optional().openapi({ description: 'Accepted as Unleash does; not stored' }),
  })
  .openapi('createTagSchema')

export const TagWithVersionSchema = z.object({ version: z.number().int(), tag: TagSchema }).openapi('tagWithVersionSchema')

export const UpdateTagsSchema = z
  .object({
    addedTags: z.array(TagInputSchema).max(100),
    removedTags: z.array(TagInputSchema).max(100),
  })
  .openapi('updateTagsSchema')
export type UpdateTags = z.infer<typeof UpdateTagsSchema>

export const TagsBulkAddSchema = z
  .object({
    features: z.array(z.string().min(1)).min(1, 'name at least one flag').max(1000),
    tags: UpdateTagsSchema,
  })
  .openapi('tagsBulkAddSchema')

export const tagTypeParam = z.object({ type: z.string().openapi({ param: { name: 'type', in: 'path' }, example: 'simple' }) })
export const tagParams = tagTypeParam.extend({ value: z.string().openapi({ param: { name: 'value', in: 'path' } }) })
export const projectIdParam = z.object({ projectId: z.string().openapi({ param: { name: 'projectId', in: 'path' } }) })
