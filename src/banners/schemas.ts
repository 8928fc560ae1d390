import * as z from '../http/zod.js'

export const BANNER_VARIANTS = ['info', 'warning', 'error', 'success'] as const

/**
 * Where a banner's link may point: an http(s) URL, a path of the console (`/projects`, never `//host` or `/\host`,
 * which browsers read as another site), or `dialog` (the banner's dialog). Nothing else (`javascript:`, `data:`…).
 */
export function isSafeBannerLink(link: string): boolean {
  if (link === 'dialog') return true
  if (/[\s\\]/.test(link)) return false
  if (link.startsWith('/')) return !link.startsWith('//')
  try {
    const url = new URL(link)
    return url.protocol === 'https:' || url.protocol === 'http:'
  } catch {
    return false
  }
}

const optionalText = (max: number, description: string) => z.string().trim().max(max).nullable().optional().openapi({ description })

export const BannerInputSchema = z
  .object({
    message: z.string().trim().min(1, 'message must not be empty').max(1000).openapi({ description: 'The text shown to every signed-in user (plain text: the console shows it as written)' }),
    variant: z.enum(BANNER_VARIANTS).optional().openapi({ description: 'info (the default), warning, error or success' }),
    sticky: z.boolean().optional().openapi({ description: 'Whether it stays at the top of the screen while the page scrolls; default false' }),
    icon: z
      .string()
      .trim()
      .max(100)
      .regex(/^[a-z0-9_]+$/, 'icon must be an icon name in lower case (letters, digits, _), or none')
      .nullable()
      .optional()
      .openapi({ description: 'An icon name; `none` for no icon; default: the variant\'s icon' }),
    link: z
      .string()
      .trim()
      .max(2000)
      .refine(isSafeBannerLink, 'link must be an http(s) URL, a path of the console starting with /, or dialog')
      .nullable()
      .optional()
      .openapi({ description: 'An http(s) URL, a path of the console (e.g. `/projects`), or `dialog` to open the banner\'s dialog; none: no link' }),
    linkText: optionalText(100, 'The link\'s text; default "More info"'),
    dialogTitle: optionalText(200, 'The dialog\'s title; default: the link text'),
    dialog: optionalText(10_000, 'The dialog\'s text (plain text), shown when `link` is `dialog`'),
    enabled: z.boolean().optional().openapi({ description: 'Whether it is shown; default true on creation, kept on an update' }),
  })
  .superRefine((banner, ctx) => {
    if (banner.link === 'dialog' && !banner.dialog) ctx.addIssue({ code: 'custom', path: ['dialog'], message: 'a banner whose link is dialog needs the dialog\'s text' })
  })
  .openapi('createBannerSchema')
export type BannerInput = z.infer<typeof BannerInputSchema>

export const BannerSchema = z
  .object({
    id: z.number().int().min(1),
    message: z.string(),
    variant: z.enum(BANNER_VARIANTS),
    sticky: z.boolean(),
    icon: z.string().nullable(),
    link: z.string().nullable(),
    linkText: z.string().nullable(),
    dialogTitle: z.string().nullable(),
    dialog: z.string().nullable(),
    enabled: z.boolean(),
    createdAt: z.string(),
  })
  .openapi('bannerSchema')
export type Banner = z.infer<typeof BannerSchema>

export const BannersSchema = z.object({ banners: z.array(BannerSchema) }).openapi('bannersSchema')

export const bannerIdParam = z.object({
  id: z.string().openapi({ param: { name: 'id', in: 'path' }, description: 'The banner id', example: '1' }),
})
