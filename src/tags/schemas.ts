import { z } from '@hono/zod-openapi'
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
