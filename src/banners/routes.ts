import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { hasPermission, Permission } from '../core/permissions.js'
import { bannerIdParam, BannerInputSchema, BannerSchema, BannersSchema } from './schemas.js'
import { createBanner, deleteBanner, listBanners, switchBanner, updateBanner } from './store.js'

const tags = ['Banners']
const ADMIN_ONLY = ' Needs ADMIN (banners are the instance admins\', as in Unleash).'
const LINKS =
  ' `link` is an http(s) URL, a path of the console (`/projects`) or `dialog` (then `dialog` is required); anything else (`javascript:`…) is a 400. ' +
  'The console shows `message` and `dialog` as plain text, never as HTML.'

const listRoute = adminRoute({
  method: 'get',
  path: '/api/admin/banners',
  operationId: 'getBanners',
  tags,
  summary: 'Get banners',
  description:
    'Newest first. Any signed-in user or token may read them, so the console can show the enabled banners at the top of every page: callers with ADMIN get every banner, others only the enabled ones.',
  responses: { 200: { description: 'The banners', content: jsonContent(BannersSchema) }, ...pickErrors(401, 403) },
})

const createRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/banners',
  operationId: 'createBanner',
  tags,
  summary: 'Create a banner',
  description: `A message shown at the top of the console to every signed-in user while enabled (enabled unless \`enabled: false\`).${LINKS}${ADMIN_ONLY} Emits \`banner-created\` (data: the banner).`,
  request: { body: { required: true, content: jsonContent(BannerInputSchema) } },
  responses: { 201: { description: 'The new banner', content: jsonContent(BannerSchema) }, ...pickErrors(400, 401, 403, 415) },
})

const updateRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/banners/{id}',
  operationId: 'updateBanner',
  tags,
  summary: 'Update a banner',
  description: `Replaces the banner's fields with the body's (a field left out takes its default; \`enabled\` left out is kept).${LINKS} 404 for an unknown banner.${ADMIN_ONLY} Emits \`banner-updated\` (data and preData: the banner after and before).`,
  request: { params: bannerIdParam, body: { required: true, content: jsonContent(BannerInputSchema) } },
  responses: { 200: { description: 'The banner', content: jsonContent(BannerSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const switchRoute = (enabled: boolean) =>
  adminRoute({
    method: 'post',
    'x-change-requests': 'no-sdk-effect',
    'x-permission': { name: Permission.ADMIN },
    path: `/api/admin/banners/{id}/${enabled ? 'on' : 'off'}`,
    operationId: enabled ? 'enableBanner' : 'disableBanner',
    tags,
    summary: enabled ? 'Enable a banner' : 'Disable a banner',
    description: `${enabled ? 'Shows the banner to every signed-in user' : 'Hides the banner from everyone but admins'}. 404 for an unknown banner.${ADMIN_ONLY} Emits \`banner-updated\` when it changes (nothing when it already was ${enabled ? 'enabled' : 'disabled'}).`,
    request: { params: bannerIdParam },
    responses: { 200: { description: 'The banner', content: jsonContent(BannerSchema) }, ...pickErrors(401, 403, 404) },
  })
const onRoute = switchRoute(true)
const offRoute = switchRoute(false)

const deleteRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: '/api/admin/banners/{id}',
  operationId: 'deleteBanner',
  tags,
  summary: 'Delete a banner',
  description: `404 for an unknown banner.${ADMIN_ONLY} Emits \`banner-deleted\` (preData: the banner).`,
  request: { params: bannerIdParam },
  responses: { 200: { description: 'The banner was deleted' }, ...pickErrors(401, 403, 404) },
})

export const bannerRoutes = createRouter()
  .openapi(listRoute, async (c) => c.json({ banners: await listBanners(c.var.db, { all: hasPermission(c.var.principal, Permission.ADMIN) }) }, 200))
  .openapi(createRoute, async (c) => c.json(await createBanner(c.var.db, c.var.caller, c.req.valid('json')), 201))
  .openapi(updateRoute, async (c) => c.json(await updateBanner(c.var.db, c.var.caller, c.req.valid('param').id, c.req.valid('json')), 200))
  .openapi(onRoute, async (c) => c.json(await switchBanner(c.var.db, c.var.caller, c.req.valid('param').id, true), 200))
  .openapi(offRoute, async (c) => c.json(await switchBanner(c.var.db, c.var.caller, c.req.valid('param').id, false), 200))
  .openapi(deleteRoute, async (c) => {
    await deleteBanner(c.var.db, c.var.caller, c.req.valid('param').id)
    return c.body(null, 200)
  })
