import * as z from '../http/zod.js'

/** A link is shown to everyone who reads the flag: bounded, so a page of links stays a page. */
export const MAX_LINK_URL_LENGTH = 2048
export const MAX_LINK_TITLE_LENGTH = 250
/** As Unleash: a flag holds at most 10 links. */
export const MAX_LINKS_PER_FLAG = 10

export const LinkSchema = z
  .object({
    url: z.string().min(1).max(MAX_LINK_URL_LENGTH).openapi({ description: 'The URL the flag is linked to: http or https (https:// is assumed when no scheme is given)', example: 'https://github.com/search?q=cleanupReminder&type=code' }),
    title: z.string().max(MAX_LINK_TITLE_LENGTH).nullish().openapi({ description: 'The description of the link', example: 'Github cleanup' }),
  })
  .openapi('linkSchema')
export type LinkInput = z.infer<typeof LinkSchema>

/** A link as a flag shows it (its `links`). A function: only the OpenAPI document needs it. */
export const featureLinkSchema = () =>
  z.object({ id: z.string(), url: z.string(), title: z.string().nullable() }).openapi('featureLinkSchema')

export const linkPathParams = z.object({
  projectId: z.string().openapi({ param: { name: 'projectId', in: 'path' } }),
  featureName: z.string().openapi({ param: { name: 'featureName', in: 'path' } }),
})
export const linkIdPathParams = linkPathParams.extend({
  linkId: z.string().openapi({ param: { name: 'linkId', in: 'path' } }),
})
