import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createEnvironment, createFlag, createProject, fresh, ensureTagType } from './helpers/factories.js'
import { createPat, createSignedInUser, type TestUser } from './helpers/users.js'

/*
 * Walks every /api/admin route of the OpenAPI document: without credentials it is a 401, with a client
 * or frontend token a 403, and every route that changes state refuses a Viewer (signed in, or through a
 * personal access token) with 403 NoAccessError naming the permission (and the environment, for
 * routes about one). Then a table of representative writes checks that the role allowed gets through.
 * A new write route without a case here fails the first test.
 */

let t: TestApp
let viewer: TestUser
let viewerPat: string
let editor: TestUser
let member: TestUser
let owner: TestUser
let admin: TestUser
let clientToken: string
let frontendToken: string
let targetUserId: number
let strategyId: string
let linkId: string
let segmentId: number
let addonId: number
let changeRequestId: number
let bannerId: number
let inviteSecret: string
let changeId: number
let roleId: number
let unusedRoleId: number
let groupId: number
let serviceAccountId: number
let serviceAccountTokenId: number
let signalEndpointId: number
let signalEndpointTokenId: number
let actionSetId: number
let shopToken: string

const F = '/api/admin/projects/shop/features'

interface WriteRequest {
  path: () => string
  body?: unknown
}

/** A request each write route accepts from a caller allowed to make it (so a 403 is about permission, not input). */
const writeRequests: Record<string, WriteRequest> = {
  'POST /api/admin/addons': { path: () => '/api/admin/addons', body: { provider: 'webhook', enabled: false, parameters: { url: 'https://hooks.example.com/x' }, events: ['feature-created'] } },
  'PUT /api/admin/addons/{id}': { path: () => `/api/admin/addons/${addonId}`, body: { provider: 'webhook', enabled: false, parameters: { url: 'https://hooks.example.com/y' }, events: ['feature-created'] } },
  'DELETE /api/admin/addons/{id}': { path: () => `/api/admin/addons/${addonId}` },
  'POST /api/admin/api-tokens': { path: () => '/api/admin/api-tokens', body: { tokenName: 'x', type: 'client', environment: 'development' } },
  'PUT /api/admin/api-tokens/{token}': { path: () => `/api/admin/api-tokens/${encodeURIComponent(clientToken)}`, body: { expiresAt: '2099-01-01T00:00:00Z' } },
  'DELETE /api/admin/api-tokens/{token}': { path: () => `/api/admin/api-tokens/${encodeURIComponent(clientToken)}` },
  'POST /api/admin/projects/{projectId}/api-tokens': { path: () => '/api/admin/projects/shop/api-tokens', body: { tokenName: 'x', type: 'client' } },
  'DELETE /api/admin/projects/{projectId}/api-tokens/{token}': { path: () => `/api/admin/projects/shop/api-tokens/${encodeURIComponent(shopToken)}` },
  'POST /api/admin/archive/revive/{featureName}': { path: () => '/api/admin/archive/revive/old' },
  'DELETE /api/admin/archive/{featureName}': { path: () => '/api/admin/archive/old' },
  'POST /api/admin/projects/{projectId}/delete': { path: () => '/api/admin/projects/shop/delete', body: { features: ['old'] } },
  'POST /api/admin/projects/{projectId}/archive': { path: () => '/api/admin/projects/shop/archive', body: { features: ['cart'] } },
  'POST /api/admin/projects/{projectId}/archive/validate': { path: () => '/api/admin/projects/shop/archive/validate', body: { features: ['cart'] } },
  'POST /api/admin/projects/{projectId}/revive': { path: () => '/api/admin/projects/shop/revive', body: { features: ['old'] } },
  'POST /api/admin/projects/{projectId}/features/{featureName}/clone': { path: () => `${F}/cart/clone`, body: { name: 'cart-copy' } },
  'POST /api/admin/projects/{projectId}/features/{featureName}/changeProject': { path: () => `${F}/cart/changeProject`, body: { newProjectId: 'other' } },
  'POST /api/admin/auth/oidc/settings': { path: () => '/api/admin/auth/oidc/settings', body: { enabled: false } },
  'DELETE /api/admin/auth/oidc/settings': { path: () => '/api/admin/auth/oidc/settings' },
  'POST /api/admin/invite-link/tokens': { path: () => '/api/admin/invite-link/tokens', body: { name: 'invite', expiresAt: new Date(Date.now() + 86_400_000).toISOString() } },
  'PUT /api/admin/invite-link/tokens/{token}': { path: () => `/api/admin/invite-link/tokens/${inviteSecret}`, body: { enabled: false } },
  'POST /api/admin/auth/simple/settings': { path: () => '/api/admin/auth/simple/settings', body: { disabled: false } },
  'POST /api/admin/environments': { path: () => '/api/admin/environments', body: { name: 'qa', type: 'test' } },
  'PUT /api/admin/environments/sort-order': { path: () => '/api/admin/environments/sort-order', body: { development: 100 } },
  'PUT /api/admin/environments/{name}': { path: () => '/api/admin/environments/development', body: { type: 'development' } },
  'POST /api/admin/environments/{name}/on': { path: () => '/api/admin/environments/development/on' },
  'POST /api/admin/environments/{name}/off': { path: () => '/api/admin/environments/development/off' },
  'DELETE /api/admin/environments/{name}': { path: () => '/api/admin/environments/development' },
  'POST /api/admin/environments/{name}/clone': { path: () => '/api/admin/environments/development/clone', body: { name: 'dev-copy', type: 'development' } },
  'DELETE /api/admin/projects/{projectId}/environments/{environment}': { path: () => '/api/admin/projects/shop/environments/production' },
  // Kill switches are never potentially stale already: setting it so changes nothing another test reads.
  'PUT /api/admin/feature-types/{id}/lifetime': { path: () => '/api/admin/feature-types/kill-switch/lifetime', body: { lifetimeDays: null } },
  'POST /api/admin/features/{featureName}/tags': { path: () => '/api/admin/features/cart/tags', body: { type: 'team', value: 'growth' } },
  'DELETE /api/admin/features/{featureName}/tags/{type}/{value}': { path: () => '/api/admin/features/cart/tags/team/payments' },
  'PUT /api/admin/features/{featureName}/tags': { path: () => '/api/admin/features/cart/tags', body: { addedTags: [{ type: 'team', value: 'growth' }], removedTags: [] } },
  'PUT /api/admin/projects/{projectId}/tags': { path: () => '/api/admin/projects/shop/tags', body: { features: ['cart'], tags: { addedTags: [{ type: 'team', value: 'growth' }], removedTags: [] } } },
  'POST /api/admin/tags': { path: () => '/api/admin/tags', body: { type: 'team', value: 'growth' } },
  'DELETE /api/admin/tags/{type}/{value}': { path: () => '/api/admin/tags/team/payments' },
  'POST /api/admin/tag-types': { path: () => '/api/admin/tag-types', body: { name: 'colour' } },
  'PUT /api/admin/tag-types/{name}': { path: () => '/api/admin/tag-types/team', body: { description: 'Teams' } },
  'DELETE /api/admin/tag-types/{name}': { path: () => '/api/admin/tag-types/team' },
  'POST /api/admin/projects': { path: () => '/api/admin/projects', body: { name: 'New' } },
  'PUT /api/admin/projects/{projectId}': { path: () => '/api/admin/projects/shop', body: { name: 'Shop!' } },
  'DELETE /api/admin/projects/{projectId}': { path: () => '/api/admin/projects/shop' },
  'POST /api/admin/projects/archive/{projectId}': { path: () => '/api/admin/projects/archive/shop' },
  'POST /api/admin/projects/revive/{projectId}': { path: () => '/api/admin/projects/revive/shop' },
  'POST /api/admin/projects/{projectId}/access': {
    path: () => '/api/admin/projects/shop/access',
    get body() {
      return { roles: [5], users: [targetUserId] }
    },
  },
  'PUT /api/admin/projects/{projectId}/users/{userId}/roles': { path: () => `/api/admin/projects/shop/users/${member.id}/roles`, body: { roles: [4] } },
  'PUT /api/admin/projects/{projectId}/access': {
    path: () => '/api/admin/projects/shop/access',
    get body() {
      return { roles: [{ id: 4, users: [owner.id] }, { id: 5, users: [member.id], groups: [groupId] }] }
    },
  },
  'POST /api/admin/projects/{projectId}/role/{roleId}/access': { path: () => '/api/admin/projects/shop/role/5/access', body: { users: [], groups: [] } },
  'PUT /api/admin/projects/{projectId}/groups/{groupId}/roles': { path: () => `/api/admin/projects/shop/groups/${groupId}/roles`, body: { roles: [5] } },
  'DELETE /api/admin/projects/{projectId}/groups/{groupId}/roles': { path: () => `/api/admin/projects/shop/groups/${groupId}/roles` },
  'POST /api/admin/projects/{projectId}/users/{userId}/roles/{roleId}': { path: () => `/api/admin/projects/shop/users/${targetUserId}/roles/5` },
  'PUT /api/admin/projects/{projectId}/users/{userId}/roles/{roleId}': { path: () => `/api/admin/projects/shop/users/${member.id}/roles/5` },
  'DELETE /api/admin/projects/{projectId}/users/{userId}/roles/{roleId}': { path: () => `/api/admin/projects/shop/users/${member.id}/roles/5` },
  'POST /api/admin/projects/{projectId}/groups/{groupId}/roles/{roleId}': { path: () => `/api/admin/projects/shop/groups/${groupId}/roles/4` },
  'PUT /api/admin/projects/{projectId}/groups/{groupId}/roles/{roleId}': { path: () => `/api/admin/projects/shop/groups/${groupId}/roles/5` },
  'DELETE /api/admin/projects/{projectId}/groups/{groupId}/roles/{roleId}': { path: () => `/api/admin/projects/shop/groups/${groupId}/roles/5` },
  'POST /api/admin/roles': { path: () => '/api/admin/roles', body: { name: 'perm-role', permissions: [{ name: 'CREATE_FEATURE' }] } },
  'POST /api/admin/roles/validate': { path: () => '/api/admin/roles/validate', body: { name: 'free-role' } },
  'PUT /api/admin/roles/{roleId}': { path: () => `/api/admin/roles/${roleId}`, body: { name: 'shop-releaser', permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'development' }] } },
  'DELETE /api/admin/roles/{roleId}': { path: () => `/api/admin/roles/${unusedRoleId}` },
  'POST /api/admin/groups': { path: () => '/api/admin/groups', body: { name: 'new-group' } },
  'PUT /api/admin/groups/{groupId}': { path: () => `/api/admin/groups/${groupId}`, body: { name: 'shop-team' } },
  'DELETE /api/admin/groups/{groupId}': { path: () => `/api/admin/groups/${groupId}` },
  'DELETE /api/admin/projects/{projectId}/users/{userId}/roles': { path: () => `/api/admin/projects/shop/users/${member.id}/roles` },
  'PUT /api/admin/projects/{projectId}/change-requests/config': { path: () => '/api/admin/projects/shop/change-requests/config', body: { environment: 'development', changeRequestsEnabled: true } },
  'POST /api/admin/projects/{projectId}/environments/{environment}/change-requests': {
    path: () => '/api/admin/projects/shop/environments/production/change-requests',
    body: { feature: 'cart', action: 'updateEnabled', payload: { enabled: false } },
  },
  'PUT /api/admin/projects/{projectId}/change-requests/{id}/state': { path: () => `/api/admin/projects/shop/change-requests/${changeRequestId}/state`, body: { state: 'Approved' } },
  'POST /api/admin/projects/{projectId}/change-requests/{id}/approve': { path: () => `/api/admin/projects/shop/change-requests/${changeRequestId}/approve` },
  'PUT /api/admin/projects/{projectId}/change-requests/{id}/changes/{changeId}': {
    path: () => `/api/admin/projects/shop/change-requests/${changeRequestId}/changes/${changeId}`,
    body: { feature: 'cart', action: 'updateEnabled', payload: { enabled: false } },
  },
  'DELETE /api/admin/projects/{projectId}/change-requests/{id}/changes/{changeId}': { path: () => `/api/admin/projects/shop/change-requests/${changeRequestId}/changes/${changeId}` },
  'DELETE /api/admin/projects/{projectId}/change-requests/{id}': { path: () => `/api/admin/projects/shop/change-requests/${changeRequestId}` },
  'POST /api/admin/projects/{projectId}/environments': { path: () => '/api/admin/projects/other/environments', body: { environment: 'production' } },
  'PUT /api/admin/projects/{projectId}/environments/{environment}/default-strategy': { path: () => '/api/admin/projects/shop/environments/development/default-strategy', body: { name: 'default' } },
  'POST /api/admin/projects/{projectId}/environments/{environment}/default-strategy': { path: () => '/api/admin/projects/shop/environments/development/default-strategy', body: { name: 'default' } },
  'POST /api/admin/projects/{projectId}/features': { path: () => F, body: { name: 'new-flag' } },
  'PATCH /api/admin/projects/{projectId}/features/{featureName}': { path: () => `${F}/cart`, body: [{ op: 'replace', path: '/description', value: 'x' }] },
  'DELETE /api/admin/projects/{projectId}/features/{featureName}': { path: () => `${F}/cart` },
  'POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on': { path: () => `${F}/cart/environments/development/on` },
  'POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off': { path: () => `${F}/cart/environments/development/off` },
  'POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies': { path: () => `${F}/cart/environments/development/strategies`, body: { name: 'default' } },
  'PUT /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}': {
    path: () => `${F}/cart/environments/development/strategies/${strategyId}`,
    body: { name: 'default' },
  },
  'DELETE /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}': { path: () => `${F}/cart/environments/development/strategies/${strategyId}` },
  'POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/set-sort-order': {
    path: () => `${F}/cart/environments/development/strategies/set-sort-order`,
    get body() {
      return [{ id: strategyId, sortOrder: 0 }]
    },
  },
  'PUT /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants': { path: () => `${F}/cart/environments/development/variants`, body: [{ name: 'a' }] },
  'PATCH /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants': {
    path: () => `${F}/cart/environments/development/variants`,
    body: [{ op: 'add', path: '/-', value: { name: 'a' } }],
  },
  'PATCH /api/admin/projects/{projectId}/features/{featureName}/variants': { path: () => `${F}/cart/variants`, body: [{ op: 'add', path: '/-', value: { name: 'a' } }] },
  'POST /api/admin/projects/{projectId}/features/{child}/dependencies': { path: () => `${F}/cart-child/dependencies`, body: { feature: 'cart' } },
  'DELETE /api/admin/projects/{projectId}/features/{child}/dependencies/{parent}': { path: () => `${F}/cart-child/dependencies/cart` },
  'DELETE /api/admin/projects/{projectId}/features/{child}/dependencies': { path: () => `${F}/cart-child/dependencies` },
  'POST /api/admin/projects/{projectId}/features/{featureName}/link': { path: () => `${F}/cart/link`, body: { url: 'https://example.com/runbook' } },
  'PUT /api/admin/projects/{projectId}/features/{featureName}/link/{linkId}': { path: () => `${F}/cart/link/${linkId}`, body: { url: 'https://example.com/other' } },
  'DELETE /api/admin/projects/{projectId}/features/{featureName}/link/{linkId}': { path: () => `${F}/cart/link/${linkId}` },
  'POST /api/admin/features-batch/import': { path: () => '/api/admin/features-batch/import', body: { project: 'shop', environment: 'development', data: { features: [{ name: 'cart' }], featureStrategies: [], tagTypes: [] } } },
  'POST /api/admin/migrate/unleash': { path: () => '/api/admin/migrate/unleash', body: { url: 'http://127.0.0.1:1', token: 'x', dryRun: true } },
  'POST /api/admin/state/import': { path: () => '/api/admin/state/import?keep=false', body: { version: 4, features: [{ name: 'cart', project: 'shop' }] } },
  'POST /api/admin/projects/{projectId}/features/{featureName}/lifecycle/complete': { path: () => `${F}/cart/lifecycle/complete`, body: { status: 'kept' } },
  'POST /api/admin/projects/{projectId}/features/{featureName}/lifecycle/uncomplete': { path: () => `${F}/cart/lifecycle/uncomplete` },
  'POST /api/admin/segments': { path: () => '/api/admin/segments', body: { name: 'gamma', constraints: [] } },
  'POST /api/admin/projects/{projectId}/bulk_features/environments/{environment}/on': { path: () => '/api/admin/projects/shop/bulk_features/environments/development/on', body: { features: ['cart'] } },
  'POST /api/admin/projects/{projectId}/bulk_features/environments/{environment}/off': { path: () => '/api/admin/projects/shop/bulk_features/environments/development/off', body: { features: ['cart'] } },
  'PUT /api/admin/projects/{projectId}/features/{featureName}': { path: () => `${F}/cart`, body: { description: 'x' } },
  'POST /api/admin/projects/{projectId}/stale': { path: () => '/api/admin/projects/shop/stale', body: { features: ['cart'], stale: true } },
  'PATCH /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}': {
    path: () => `${F}/cart/environments/development/strategies/${strategyId}`,
    body: [{ op: 'replace', path: '/title', value: 'x' }],
  },
  'PUT /api/admin/projects/{projectId}/features/{featureName}/variants-batch': { path: () => `${F}/cart/variants-batch`, body: { variants: [], environments: ['development'] } },
  'POST /api/admin/segments/strategies': { path: () => '/api/admin/segments/strategies', body: { projectId: 'shop', strategyId: '00000000-0000-4000-8000-000000000000', environmentId: 'development', segmentIds: [] } },
  'POST /api/admin/maintenance': { path: () => '/api/admin/maintenance', body: { enabled: false } },
  'POST /api/admin/ui-config/cors': { path: () => '/api/admin/ui-config/cors', body: { frontendApiOrigins: ['*'] } },
  'POST /api/admin/user-admin/reset-password': { path: () => '/api/admin/user-admin/reset-password', body: { id: 'admin' } },
  'POST /api/admin/user-admin/inactive/delete': { path: () => '/api/admin/user-admin/inactive/delete', body: { ids: [] } },
  'DELETE /api/admin/user-admin/scim-users': { path: () => '/api/admin/user-admin/scim-users' },
  'POST /api/admin/metrics/applications/{appName}': { path: () => '/api/admin/metrics/applications/cart-service', body: { appName: 'cart-service' } },
  'DELETE /api/admin/metrics/applications/{appName}': { path: () => '/api/admin/metrics/applications/cart-service' },
  'PUT /api/admin/segments/{id}': { path: () => `/api/admin/segments/${segmentId}`, body: { name: 'beta', constraints: [] } },
  'DELETE /api/admin/segments/{id}': { path: () => `/api/admin/segments/${segmentId}` },
  'POST /api/admin/context': { path: () => '/api/admin/context', body: { name: 'plan' } },
  'POST /api/admin/context/validate': { path: () => '/api/admin/context/validate', body: { name: 'free-name' } },
  'PUT /api/admin/context/{contextField}': { path: () => '/api/admin/context/tier', body: { legalValues: [{ value: 'gold' }] } },
  'DELETE /api/admin/context/{contextField}': { path: () => '/api/admin/context/tier' },
  'POST /api/admin/context/{contextField}/legal-values': { path: () => '/api/admin/context/tier/legal-values', body: { value: 'silver' } },
  'DELETE /api/admin/context/{contextField}/legal-values/{legalValue}': { path: () => '/api/admin/context/tier/legal-values/gold' },
  'POST /api/admin/projects/{projectId}/context': { path: () => '/api/admin/projects/shop/context', body: { name: 'shop-plan' } },
  'POST /api/admin/projects/{projectId}/context/validate': { path: () => '/api/admin/projects/shop/context/validate', body: { name: 'free-name' } },
  'PUT /api/admin/projects/{projectId}/context/{contextField}': { path: () => '/api/admin/projects/shop/context/shop-tier', body: { legalValues: [{ value: 'gold' }] } },
  'DELETE /api/admin/projects/{projectId}/context/{contextField}': { path: () => '/api/admin/projects/shop/context/shop-tier' },
  'POST /api/admin/projects/{projectId}/context/{contextField}/legal-values': { path: () => '/api/admin/projects/shop/context/shop-tier/legal-values', body: { value: 'silver' } },
  'DELETE /api/admin/projects/{projectId}/context/{contextField}/legal-values/{legalValue}': { path: () => '/api/admin/projects/shop/context/shop-tier/legal-values/gold' },
  'POST /api/admin/strategies': { path: () => '/api/admin/strategies', body: { name: 'region', parameters: [] } },
  'PUT /api/admin/strategies/{name}': { path: () => '/api/admin/strategies/tenant', body: { parameters: [{ name: 'ids', type: 'list' }] } },
  'DELETE /api/admin/strategies/{name}': { path: () => '/api/admin/strategies/tenant' },
  'POST /api/admin/strategies/{strategyName}/deprecate': { path: () => '/api/admin/strategies/tenant/deprecate' },
  'POST /api/admin/strategies/{strategyName}/reactivate': { path: () => '/api/admin/strategies/tenant/reactivate' },
  'POST /api/admin/user-admin': { path: () => '/api/admin/user-admin', body: { username: 'new-user', rootRole: 'Viewer' } },
  'PUT /api/admin/user-admin/{id}': { path: () => `/api/admin/user-admin/${targetUserId}`, body: { name: 'x' } },
  'DELETE /api/admin/user-admin/{id}': { path: () => `/api/admin/user-admin/${targetUserId}` },
  'POST /api/admin/user-admin/{id}/change-password': { path: () => `/api/admin/user-admin/${targetUserId}/change-password`, body: { password: 'long enough' } },
  'DELETE /api/admin/user-admin/{id}/sso': { path: () => `/api/admin/user-admin/${targetUserId}/sso` },
  'POST /api/admin/banners': { path: () => '/api/admin/banners', body: { message: 'Hello' } },
  'PUT /api/admin/banners/{id}': { path: () => `/api/admin/banners/${bannerId}`, body: { message: 'Hello again' } },
  'POST /api/admin/banners/{id}/on': { path: () => `/api/admin/banners/${bannerId}/on` },
  'POST /api/admin/banners/{id}/off': { path: () => `/api/admin/banners/${bannerId}/off` },
  'DELETE /api/admin/banners/{id}': { path: () => `/api/admin/banners/${bannerId}` },
  'POST /api/admin/signal-endpoints': { path: () => '/api/admin/signal-endpoints', body: { name: 'new-endpoint' } },
  'PUT /api/admin/signal-endpoints/{id}': { path: () => `/api/admin/signal-endpoints/${signalEndpointId}`, body: { name: 'alerts' } },
  'POST /api/admin/signal-endpoints/{id}/on': { path: () => `/api/admin/signal-endpoints/${signalEndpointId}/on` },
  'POST /api/admin/signal-endpoints/{id}/off': { path: () => `/api/admin/signal-endpoints/${signalEndpointId}/off` },
  'DELETE /api/admin/signal-endpoints/{id}': { path: () => `/api/admin/signal-endpoints/${signalEndpointId}` },
  'POST /api/admin/signal-endpoints/{id}/tokens': { path: () => `/api/admin/signal-endpoints/${signalEndpointId}/tokens`, body: { name: 'x' } },
  'PUT /api/admin/signal-endpoints/{id}/tokens/{tokenId}': { path: () => `/api/admin/signal-endpoints/${signalEndpointId}/tokens/${signalEndpointTokenId}`, body: { name: 'y' } },
  'DELETE /api/admin/signal-endpoints/{id}/tokens/{tokenId}': { path: () => `/api/admin/signal-endpoints/${signalEndpointId}/tokens/${signalEndpointTokenId}` },
  'POST /api/admin/projects/{projectId}/actions': { path: () => '/api/admin/projects/shop/actions', get body() { return actionSetBody('new-set') } },
  'PUT /api/admin/projects/{projectId}/actions/{actionSetId}': { path: () => `/api/admin/projects/shop/actions/${actionSetId}`, get body() { return actionSetBody('kill') } },
  'POST /api/admin/projects/{projectId}/actions/{actionSetId}/on': { path: () => `/api/admin/projects/shop/actions/${actionSetId}/on` },
  'POST /api/admin/projects/{projectId}/actions/{actionSetId}/off': { path: () => `/api/admin/projects/shop/actions/${actionSetId}/off` },
  'DELETE /api/admin/projects/{projectId}/actions/{actionSetId}': { path: () => `/api/admin/projects/shop/actions/${actionSetId}` },
  'POST /api/admin/service-account': { path: () => '/api/admin/service-account', body: { username: 'new-bot', name: 'Bot', rootRole: 3 } },
  'PUT /api/admin/service-account/{id}': { path: () => `/api/admin/service-account/${serviceAccountId}`, body: { name: 'x' } },
  'DELETE /api/admin/service-account/{id}': { path: () => `/api/admin/service-account/${serviceAccountId}` },
  'POST /api/admin/service-account/{id}/token': { path: () => `/api/admin/service-account/${serviceAccountId}/token`, body: { description: 'x', expiresAt: '2099-01-01T00:00:00Z' } },
  'DELETE /api/admin/service-account/{id}/token/{tokenId}': { path: () => `/api/admin/service-account/${serviceAccountId}/token/${serviceAccountTokenId}` },
}

/** An action set of shop: switches cart off in development as the service account when a signal of the endpoint arrives. */
const actionSetBody = (name: string) => ({
  name,
  actorId: serviceAccountId,
  match: { source: 'signal-endpoint', sourceId: signalEndpointId, payload: {} },
  actions: [{ action: 'TOGGLE_FEATURE_OFF', sortOrder: 1, executionParams: { environment: 'development', featureName: 'cart' } }],
})

/** Writes any signed-in user may make, because what they change is the caller's own, or nothing. */
const openToEveryUser: Record<string, string> = {
  'POST /api/admin/projects/{projectId}/favorites': 'the caller’s own favorites',
  'DELETE /api/admin/projects/{projectId}/favorites': 'the caller’s own favorites',
  'POST /api/admin/projects/{projectId}/features/{featureName}/favorites': 'the caller’s own favorites',
  'DELETE /api/admin/projects/{projectId}/features/{featureName}/favorites': 'the caller’s own favorites',
  'POST /api/admin/user/tokens': 'the caller’s own personal access tokens',
  'POST /api/admin/features/validate': 'writes nothing: validates a flag name, as in Unleash',
  'POST /api/admin/segments/validate': 'writes nothing: validates a segment name, as in Unleash',
  'POST /api/admin/constraints/validate': 'writes nothing: validates a constraint, as in Unleash',
  'DELETE /api/admin/user/tokens/{id}': 'the caller’s own personal access tokens',
  'POST /api/admin/user/change-password': 'the caller’s own password',
  'POST /api/admin/playground': 'an evaluation: writes nothing',
  'POST /api/admin/user-admin/validate-password': 'a check of a password’s form: writes nothing (any caller, as in Unleash)',
  'POST /api/admin/record-ui-error': 'the console reporting its own error: logged, never stored (any caller, as in Unleash)',
  'POST /api/admin/tag-types/validate': 'a check: writes nothing (any caller, as in Unleash)',
  'POST /api/admin/playground/advanced': 'an evaluation: writes nothing',
  'POST /api/admin/features-batch/export': 'an export of what the caller may see (as in Unleash, any caller; records features-exported)',
  'POST /api/admin/features-batch/validate': 'a check: writes nothing, and answers the permissions the import would need',
  'POST /api/admin/playground/change-request/{id}': 'an evaluation: writes nothing',
  'POST /api/admin/feedback': 'the caller’s own answer to a feedback prompt (a user only; as in Unleash)',
  'PUT /api/admin/feedback/{id}': 'the caller’s own answer to a feedback prompt (a user only; as in Unleash)',
  'POST /api/admin/splash/{id}': 'the caller’s own record of a splash screen seen (a user only; as in Unleash)',
}

let adminRoutes: { method: string; template: string; key: string }[] = []
const dummyPath = (template: string) => template.replace(/\{[^}]+\}/g, '1')

beforeAll(async () => {
  t = await createTestApp()
  // Flags here are tagged with the tag type `team`, which (as in Unleash) must exist first.
  await ensureTagType(t, 'team')
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await t.call(method, path, { body })
    expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300)
    return res.body
  }
  await ok('POST', '/api/admin/projects', { id: 'shop', name: 'Shop' })
  await ok('POST', '/api/admin/projects', { id: 'other', name: 'Other', environments: ['development'] })
  await ok('POST', F, { name: 'cart' })
  await ok('POST', F, { name: 'cart-child' })
  await ok('POST', `${F}/cart-child/dependencies`, { feature: 'cart' })
  await ok('POST', F, { name: 'old' })
  await ok('DELETE', `${F}/old`)
  await ok('POST', `${F}/cart/environments/development/strategies`, { name: 'default' })
  strategyId = (await ok('GET', `${F}/cart/environments/development/strategies`))[0].id
  await ok('POST', `${F}/cart/link`, { url: 'https://example.com/runbook' })
  linkId = (await ok('GET', `${F}/cart`)).links[0].id
  await ok('POST', '/api/admin/features/cart/tags', { type: 'team', value: 'payments' })
  segmentId = (await ok('POST', '/api/admin/segments', { name: 'beta', constraints: [] })).id
  await ok('POST', '/api/admin/context', { name: 'tier', legalValues: [{ value: 'gold' }] })
  await ok('POST', '/api/admin/projects/shop/context', { name: 'shop-tier', legalValues: [{ value: 'gold' }] })
  await ok('POST', '/api/admin/strategies', { name: 'tenant', parameters: [] })
  addonId = (await ok('POST', '/api/admin/addons', writeRequests['POST /api/admin/addons']!.body)).id
  bannerId = (await ok('POST', '/api/admin/banners', { message: 'Welcome' })).id
  inviteSecret = (await ok('POST', '/api/admin/invite-link/tokens', { name: 'welcome', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })).secret
  await ok('PUT', '/api/admin/projects/shop/change-requests/config', { environment: 'production', changeRequestsEnabled: true })
  const changeRequest = await ok('POST', '/api/admin/projects/shop/environments/production/change-requests', { feature: 'cart', action: 'updateEnabled', payload: { enabled: true } })
  changeRequestId = changeRequest.id
  changeId = changeRequest.features[0].changes[0].id
  await ok('PUT', `/api/admin/projects/shop/change-requests/${changeRequestId}/state`, { state: 'In review' })
  clientToken = (await ok('POST', '/api/admin/api-tokens', { tokenName: 'sdk', type: 'client', environment: 'development' })).secret
  frontendToken = (await ok('POST', '/api/admin/api-tokens', { tokenName: 'web', type: 'frontend', environment: 'development' })).secret
  shopToken = (await ok('POST', '/api/admin/projects/shop/api-tokens', { tokenName: 'shop-sdk', type: 'client' })).secret

  viewer = await createSignedInUser(t, 'vera', 'Viewer')
  viewerPat = await createPat(viewer)
  editor = await createSignedInUser(t, 'ed', 'Editor')
  member = await createSignedInUser(t, 'mem', 'Viewer')
  owner = await createSignedInUser(t, 'own', 'Viewer')
  admin = await createSignedInUser(t, 'adm', 'Admin')
  targetUserId = (await ok('POST', '/api/admin/user-admin', { username: 'target', rootRole: 'Viewer' })).id
  serviceAccountId = (await ok('POST', '/api/admin/service-account', { username: 'bot', name: 'Bot', rootRole: 3 })).id
  signalEndpointId = (await ok('POST', '/api/admin/signal-endpoints', { name: 'alerts' })).id
  signalEndpointTokenId = (await ok('POST', `/api/admin/signal-endpoints/${signalEndpointId}/tokens`, { name: 'grafana' })).id
  actionSetId = (await ok('POST', '/api/admin/projects/shop/actions', actionSetBody('kill'))).id
  serviceAccountTokenId = (await ok('POST', `/api/admin/service-account/${serviceAccountId}/token`, { description: 'ci', expiresAt: '2099-01-01T00:00:00Z' })).id
  await ok('POST', '/api/admin/projects/shop/access', { roles: [5], users: [member.id] })
  await ok('POST', '/api/admin/projects/shop/access', { roles: [4], users: [owner.id] })
  roleId = (await ok('POST', '/api/admin/roles', { name: 'shop-releaser', permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'development' }] })).roles.id
  unusedRoleId = (await ok('POST', '/api/admin/roles', { name: 'unused', type: 'root-custom', permissions: [{ name: 'CREATE_SEGMENT' }] })).roles.id
  groupId = (await ok('POST', '/api/admin/groups', { name: 'shop-team', users: [{ user: { id: targetUserId } }] })).id
  await ok('POST', '/api/admin/projects/shop/access', { roles: [5], users: [], groups: [groupId] })

  const doc = (await t.call('GET', '/docs/openapi.json', { token: null })).body
  adminRoutes = Object.entries<Record<string, unknown>>(doc.paths)
    .filter(([template]) => template.startsWith('/api/admin'))
    .flatMap(([template, ops]) => Object.keys(ops).map((m) => ({ method: m.toUpperCase(), template, key: `${m.toUpperCase()} ${template}` })))
})
afterAll(() => t.close())

const writeRoutes = () => adminRoutes.filter((r) => r.method !== 'GET')

describe('every /api/admin route', () => {
  it('has a permission case for every route that changes state', () => {
    expect(writeRoutes().length).toBeGreaterThan(40)
    const missing = writeRoutes().filter((r) => !(r.key in writeRequests) && !(r.key in openToEveryUser))
    expect(missing.map((r) => r.key)).toEqual([])
  })

  it('answers 401 AuthenticationRequired without credentials', async () => {
    for (const route of adminRoutes) {
      const res = await t.call(route.method, dummyPath(route.template), { token: null })
      expect(res.status, route.key).toBe(401)
      expect(res.body.name, route.key).toBe('AuthenticationRequired')
    }
  })

  it('answers 403 NoAccessError to client and frontend tokens', async () => {
    for (const token of [clientToken, frontendToken]) {
      for (const route of adminRoutes) {
        const res = await t.call(route.method, dummyPath(route.template), { token })
        expect(res.status, route.key).toBe(403)
        expect(res.body.name, route.key).toBe('NoAccessError')
      }
    }
  })

  for (const via of ['a session', 'a personal access token'] as const) {
    it(`refuses every write to a Viewer through ${via}, naming the permission and the environment`, async () => {
      const call = (method: string, path: string, body?: unknown) => (via === 'a session' ? viewer.call(method, path, { body }) : t.call(method, path, { token: viewerPat, body }))
      const before = (await t.query<{ n: number }>('select count(*)::int as n from events'))[0]!.n
      for (const route of writeRoutes().filter((r) => r.key in writeRequests)) {
        const request = writeRequests[route.key]!
        const path = request.path()
        const res = await call(route.method, path, request.body)
        expect(res.status, `${route.key}: ${res.text}`).toBe(403)
        expect(res.body.name, route.key).toBe('NoAccessError')
        expect(res.body.message, route.key).toMatch(/permission=[A-Z_]+/)
        const environment = /\/environments\/([^/]+)/.exec(path)
        if (route.template.includes('{environment}')) expect(res.body.message, route.key).toContain(`environment=${environment![1]}`)
      }
      expect((await t.query<{ n: number }>('select count(*)::int as n from events'))[0]!.n).toBe(before)
    })
  }

  it("lets a project's Member revive one of its flags, and no other project's", async () => {
    const mine = await createProject(t, { environments: ['development'] })
    await t.call('POST', `/api/admin/projects/${mine}/access`, { body: { roles: [5], users: [member.id] } })
    const { flag } = await archivedIn(mine)()
    const { flag: notMine } = await archivedIn('other')()
    const refused = await member.call('POST', `/api/admin/archive/revive/${notMine}`)
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body.message).toContain('project=other')
    const revived = await member.call('POST', `/api/admin/archive/revive/${flag}`)
    expect(revived.status, revived.text).toBe(200)
    expect((await t.call('GET', `/api/admin/projects/${mine}/features/${flag}`)).body.archived).toBe(false)
  })

  it('lets a Viewer manage what is their own', async () => {
    const description = fresh('own')
    const pat = await createPat(viewer, description)
    const patId = (await viewer.call('GET', '/api/admin/user/tokens')).body.pats.find((p: { description: string }) => p.description === description).id
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name
    expect((await viewer.call('POST', `/api/admin/projects/${project}/favorites`)).status).toBe(200)
    expect((await viewer.call('POST', `/api/admin/projects/${project}/features/${flag}/favorites`)).status).toBe(200)
    expect((await viewer.call('DELETE', `/api/admin/projects/${project}/features/${flag}/favorites`)).status).toBe(200)
    expect((await viewer.call('DELETE', `/api/admin/user/tokens/${patId}`)).status).toBe(200)
    expect((await t.call('GET', '/api/admin/projects', { token: pat })).status).toBe(401)
  })
})

interface Grant {
  who: () => TestUser
  role: string
  method: string
  /** The route as the title shows it; `{flag}`, `{project}` and `{name}` stand for what `given` makes. */
  path: string
  body?: unknown
  /** Makes what the request acts on: a fresh flag, project or name for the placeholders. */
  given?: () => Promise<Record<string, string>>
  status: number
}

/** A fresh flag of a project (other unless given), off. */
const flagIn = (project: string) => async () => ({ flag: (await createFlag(t, {}, project)).name as string })
/** A fresh flag of the project, archived. */
const archivedIn = (project: string) => async () => {
  const { flag } = await flagIn(project)()
  expect((await t.call('DELETE', `/api/admin/projects/${project}/features/${flag}`)).status).toBe(202)
  return { flag }
}
/** A fresh name, for what the request creates. */
const name = (prefix: string) => async () => ({ name: fresh(prefix) })

const grants: Grant[] = [
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/projects/other/features', body: { name: '{name}' }, given: name('ed-flag'), status: 201 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/projects/other/features/{flag}/environments/development/on', given: flagIn('other'), status: 200 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/projects/other/features/{flag}/environments/development/strategies', body: { name: 'default' }, given: flagIn('other'), status: 200 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/features/{flag}/tags', body: { type: 'team', value: 'editors' }, given: flagIn('other'), status: 201 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/segments', body: { name: '{name}', constraints: [] }, given: name('editors'), status: 201 },
  // As in Unleash, whose Editor root role holds CREATE_CONTEXT_FIELD.
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/context', body: { name: '{name}' }, given: name('ed-field'), status: 201 },
  // A project's own context fields: its Owner (UPDATE_PROJECT_CONTEXT, as Unleash's Owner role), an Editor; not a Member, nor another project's Owner.
  { who: () => owner, role: 'Owner of shop', method: 'POST', path: '/api/admin/projects/shop/context', body: { name: '{name}' }, given: name('own-field'), status: 201 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/projects/shop/context', body: { name: '{name}' }, given: name('ed-shop-field'), status: 201 },
  { who: () => member, role: 'Member of shop', method: 'POST', path: '/api/admin/projects/shop/context', body: { name: '{name}' }, given: name('mem-field'), status: 403 },
  { who: () => owner, role: 'Owner of shop', method: 'POST', path: '/api/admin/projects/other/context', body: { name: '{name}' }, given: name('own-other-field'), status: 403 },
  { who: () => owner, role: 'Owner of shop', method: 'POST', path: '/api/admin/context', body: { name: '{name}' }, given: name('own-global-field'), status: 403 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/tags', body: { type: 'team', value: '{name}' }, given: name('ed-tag'), status: 201 },
  // As in Unleash, whose Editor root role holds CREATE_STRATEGY, UPDATE_STRATEGY and DELETE_STRATEGY.
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/strategies', body: { name: '{name}', parameters: [] }, given: name('ed-strategy'), status: 201 },
  { who: () => member, role: 'Member of shop', method: 'POST', path: '/api/admin/strategies', body: { name: '{name}', parameters: [] }, given: name('mem-strategy'), status: 403 },
  { who: () => editor, role: 'Editor', method: 'PUT', path: '/api/admin/projects/other/tags', body: { features: ['{flag}'], tags: { addedTags: [{ type: 'team', value: 'editors' }], removedTags: [] } }, given: flagIn('other'), status: 200 },
  { who: () => editor, role: 'Editor', method: 'PUT', path: '/api/admin/features/{flag}/tags', body: { addedTags: [{ type: 'team', value: 'editors' }], removedTags: [] }, given: flagIn('other'), status: 200 },
  // Tag types are an admin's (as in Unleash): Editors may use them, not change them.
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/tag-types', body: { name: '{name}' }, given: name('ed-kind'), status: 403 },
  { who: () => editor, role: 'Editor', method: 'PUT', path: '/api/admin/tag-types/team', body: { description: 'nope' }, status: 403 },
  { who: () => editor, role: 'Editor', method: 'DELETE', path: '/api/admin/tag-types/team', status: 403 },
  { who: () => admin, role: 'Admin', method: 'POST', path: '/api/admin/tag-types', body: { name: '{name}' }, given: name('admin-kind'), status: 201 },
  // Flag types' lifetimes are an admin's, as in Unleash.
  { who: () => editor, role: 'Editor', method: 'PUT', path: '/api/admin/feature-types/kill-switch/lifetime', body: { lifetimeDays: null }, status: 403 },
  { who: () => admin, role: 'Admin', method: 'PUT', path: '/api/admin/feature-types/kill-switch/lifetime', body: { lifetimeDays: null }, status: 200 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/projects', body: { id: '{name}', name: 'Eds' }, given: name('eds'), status: 201 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/environments', body: { name: 'qa', type: 'test' }, status: 403 },
  // Managing environments is an admin's, as in Unleash.
  { who: () => editor, role: 'Editor', method: 'PUT', path: '/api/admin/environments/development', body: { type: 'development' }, status: 403 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/environments/development/off', status: 403 },
  { who: () => editor, role: 'Editor', method: 'PUT', path: '/api/admin/environments/sort-order', body: { development: 100 }, status: 403 },
  { who: () => editor, role: 'Editor', method: 'DELETE', path: '/api/admin/environments/development', status: 403 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/environments/development/clone', body: { name: 'dev-copy', type: 'development' }, status: 403 },
  { who: () => admin, role: 'Admin', method: 'POST', path: '/api/admin/environments/development/clone', body: { name: '{name}', type: 'development', projects: ['other'] }, given: name('dev-copy'), status: 200 },
  { who: () => member, role: 'Member of shop', method: 'DELETE', path: '/api/admin/projects/shop/environments/production', status: 403 },
  { who: () => admin, role: 'Admin', method: 'PUT', path: '/api/admin/environments/{name}', body: { type: 'test' }, given: async () => ({ name: (await createEnvironment(t)).name }), status: 200 },
  { who: () => admin, role: 'Admin', method: 'DELETE', path: '/api/admin/environments/{name}', given: async () => ({ name: (await createEnvironment(t)).name }), status: 200 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/user-admin', body: { username: 'nope', rootRole: 'Admin' }, status: 403 },
  { who: () => member, role: 'Member of shop', method: 'POST', path: F, body: { name: '{name}' }, given: name('mem-flag'), status: 201 },
  { who: () => member, role: 'Member of shop', method: 'POST', path: `${F}/{flag}/environments/development/strategies`, body: { name: 'default' }, given: flagIn('shop'), status: 200 },
  { who: () => member, role: 'Member of shop', method: 'POST', path: `${F}/{flag}/environments/development/on`, given: flagIn('shop'), status: 200 },
  { who: () => member, role: 'Member of shop', method: 'PATCH', path: `${F}/{flag}`, body: [{ op: 'replace', path: '/description', value: 'x' }], given: flagIn('shop'), status: 200 },
  { who: () => member, role: 'Member of shop', method: 'POST', path: '/api/admin/projects/other/features', body: { name: 'mem-other' }, status: 403 },
  { who: () => member, role: 'Member of shop', method: 'PUT', path: '/api/admin/projects/shop', body: { name: 'Shop?' }, status: 403 },
  { who: () => member, role: 'Member of shop', method: 'POST', path: '/api/admin/api-tokens', body: { tokenName: 'm', type: 'client', environment: 'development', projects: ['shop'] }, status: 403 },
  { who: () => owner, role: 'Owner of shop', method: 'PUT', path: '/api/admin/projects/shop', body: { name: 'Shop!' }, status: 200 },
  { who: () => owner, role: 'Owner of shop', method: 'PUT', path: '/api/admin/projects/shop/environments/development/default-strategy', body: { name: 'default' }, status: 200 },
  { who: () => owner, role: 'Owner of shop', method: 'POST', path: '/api/admin/projects/shop/access', body: { roles: [5], users: [3] }, status: 200 },
  { who: () => owner, role: 'Owner of shop', method: 'POST', path: '/api/admin/api-tokens', body: { tokenName: '{name}', type: 'client', environment: 'development', projects: ['shop'] }, given: name('o'), status: 201 },
  { who: () => owner, role: 'Owner of shop', method: 'POST', path: F, body: { name: '{name}' }, given: name('owner-flag'), status: 201 },
  // A project's own API tokens: its Owner and (as in Unleash) its Member; not another project's, nor a Viewer.
  { who: () => owner, role: 'Owner of shop', method: 'POST', path: '/api/admin/projects/shop/api-tokens', body: { tokenName: '{name}', type: 'frontend' }, given: name('own-token'), status: 201 },
  { who: () => member, role: 'Member of shop', method: 'POST', path: '/api/admin/projects/shop/api-tokens', body: { tokenName: '{name}', type: 'client' }, given: name('mem-token'), status: 201 },
  { who: () => member, role: 'Member of shop', method: 'GET', path: '/api/admin/projects/shop/api-tokens', status: 200 },
  { who: () => owner, role: 'Owner of shop', method: 'POST', path: '/api/admin/projects/other/api-tokens', body: { tokenName: '{name}', type: 'client' }, given: name('own-other-token'), status: 403 },
  { who: () => owner, role: 'Owner of shop', method: 'GET', path: '/api/admin/projects/other/api-tokens', status: 403 },
  { who: () => viewer, role: 'Viewer', method: 'GET', path: '/api/admin/projects/shop/api-tokens', status: 403 },
  {
    who: () => member,
    role: 'Member of shop',
    method: 'DELETE',
    path: '/api/admin/projects/shop/api-tokens/{name}',
    given: async () => ({ name: encodeURIComponent((await t.call('POST', '/api/admin/projects/shop/api-tokens', { body: { tokenName: fresh('gone'), type: 'client' } })).body.secret) }),
    status: 200,
  },
  { who: () => owner, role: 'Owner of shop', method: 'PUT', path: '/api/admin/projects/other', body: { name: 'Other?' }, status: 403 },
  // The user search serves adding project members: admins, Editors (UPDATE_PROJECT everywhere) and Owners of some project.
  { who: () => admin, role: 'Admin', method: 'GET', path: '/api/admin/user-admin/search?q=mem', status: 200 },
  { who: () => editor, role: 'Editor', method: 'GET', path: '/api/admin/user-admin/search?q=mem', status: 200 },
  { who: () => owner, role: 'Owner of shop', method: 'GET', path: '/api/admin/user-admin/search?q=mem', status: 200 },
  { who: () => member, role: 'Member of shop', method: 'GET', path: '/api/admin/user-admin/search?q=mem', status: 403 },
  { who: () => viewer, role: 'Viewer', method: 'GET', path: '/api/admin/user-admin/search?q=mem', status: 403 },
  // So does the list of users and groups (names and e-mails) the project access picker offers.
  { who: () => admin, role: 'Admin', method: 'GET', path: '/api/admin/user-admin/access', status: 200 },
  { who: () => editor, role: 'Editor', method: 'GET', path: '/api/admin/user-admin/access', status: 200 },
  { who: () => owner, role: 'Owner of shop', method: 'GET', path: '/api/admin/user-admin/access', status: 200 },
  { who: () => member, role: 'Member of shop', method: 'GET', path: '/api/admin/user-admin/access', status: 403 },
  { who: () => viewer, role: 'Viewer', method: 'GET', path: '/api/admin/user-admin/access', status: 403 },
  { who: () => admin, role: 'Admin', method: 'POST', path: '/api/admin/environments', body: { name: '{name}', type: 'test' }, given: name('qa'), status: 201 },
  // Roles and groups are an admin's, as in Unleash; a project's Owner manages who holds which role there.
  { who: () => admin, role: 'Admin', method: 'POST', path: '/api/admin/roles', body: { name: '{name}', permissions: [{ name: 'CREATE_FEATURE' }] }, given: name('admin-role'), status: 201 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/roles', body: { name: '{name}', permissions: [] }, given: name('ed-role'), status: 403 },
  { who: () => owner, role: 'Owner of shop', method: 'POST', path: '/api/admin/roles', body: { name: '{name}', permissions: [] }, given: name('own-role'), status: 403 },
  { who: () => admin, role: 'Admin', method: 'POST', path: '/api/admin/groups', body: { name: '{name}' }, given: name('admin-group'), status: 201 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/groups', body: { name: '{name}' }, given: name('ed-group'), status: 403 },
  { who: () => owner, role: 'Owner of shop', method: 'PUT', path: '/api/admin/groups/{name}', body: { name: 'mine now' }, given: async () => ({ name: String(groupId) }), status: 403 },
  { who: () => owner, role: 'Owner of shop', method: 'POST', path: '/api/admin/projects/shop/groups/{name}/roles/4', given: async () => ({ name: String(groupId) }), status: 200 },
  { who: () => owner, role: 'Owner of shop', method: 'PUT', path: '/api/admin/projects/shop/groups/{name}/roles', body: { roles: [5] }, given: async () => ({ name: String(groupId) }), status: 200 },
  { who: () => member, role: 'Member of shop', method: 'PUT', path: '/api/admin/projects/shop/groups/{name}/roles', body: { roles: [4] }, given: async () => ({ name: String(groupId) }), status: 403 },
  { who: () => owner, role: 'Owner of shop', method: 'PUT', path: '/api/admin/projects/other/groups/{name}/roles', body: { roles: [5] }, given: async () => ({ name: String(groupId) }), status: 403 },
  { who: () => admin, role: 'Admin', method: 'PUT', path: '/api/admin/projects/other', body: { name: 'Other!' }, status: 200 },
  { who: () => admin, role: 'Admin', method: 'POST', path: '/api/admin/user-admin', body: { username: '{name}', rootRole: 'Editor' }, given: name('by-admin'), status: 201 },
  // Signal endpoints are an admin's, as in Unleash.
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/signal-endpoints', body: { name: '{name}' }, given: name('ed-endpoint'), status: 403 },
  { who: () => admin, role: 'Admin', method: 'POST', path: '/api/admin/signal-endpoints', body: { name: '{name}' }, given: name('adm-endpoint'), status: 201 },
  // Action sets are an admin's, as in Unleash, even a project Owner's project.
  { who: () => owner, role: 'Owner of shop', method: 'POST', path: '/api/admin/projects/shop/actions', get body() { return actionSetBody('by-owner') }, status: 403 },
  { who: () => admin, role: 'Admin', method: 'POST', path: '/api/admin/projects/shop/actions', get body() { return actionSetBody('{name}') }, given: name('adm-set'), status: 201 },
  // Service accounts are an admin's, as in Unleash.
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/service-account', body: { username: '{name}', name: 'Bot', rootRole: 3 }, given: name('ed-bot'), status: 403 },
  { who: () => owner, role: 'Owner of shop', method: 'POST', path: '/api/admin/service-account', body: { username: '{name}', name: 'Bot', rootRole: 3 }, given: name('own-bot'), status: 403 },
  { who: () => admin, role: 'Admin', method: 'POST', path: '/api/admin/service-account', body: { username: '{name}', name: 'Bot', rootRole: 3 }, given: name('adm-bot'), status: 201 },
  { who: () => admin, role: 'Admin', method: 'POST', path: '/api/admin/auth/oidc/settings', body: { enabled: false }, status: 200 },
  // Invite links are the instance admins', as in Unleash.
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/invite-link/tokens', body: { name: 'nope', expiresAt: '2099-01-01T00:00:00Z' }, status: 403 },
  { who: () => admin, role: 'Admin', method: 'POST', path: '/api/admin/invite-link/tokens', body: { name: 'welcome', expiresAt: new Date(Date.now() + 86_400_000).toISOString() }, status: 201 },
  // Whether passwords sign in is an admin's, as in Unleash.
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/auth/simple/settings', body: { disabled: false }, status: 403 },
  { who: () => admin, role: 'Admin', method: 'POST', path: '/api/admin/auth/simple/settings', body: { disabled: false }, status: 200 },
  // What a change request holds is its author's to change (and an admin's), not a reviewer's.
  {
    who: () => editor,
    role: 'Editor',
    method: 'PUT',
    path: '/api/admin/projects/shop/change-requests/{name}/changes/{flag}',
    body: { feature: 'cart', action: 'updateEnabled', payload: { enabled: false } },
    given: async () => ({ name: String(changeRequestId), flag: String(changeId) }),
    status: 403,
  },
  { who: () => editor, role: 'Editor', method: 'DELETE', path: '/api/admin/projects/shop/change-requests/{name}', given: async () => ({ name: String(changeRequestId) }), status: 403 },
  // Banners are the instance admins', as in Unleash.
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/banners', body: { message: 'nope' }, status: 403 },
  { who: () => owner, role: 'Owner of shop', method: 'POST', path: '/api/admin/banners', body: { message: 'nope' }, status: 403 },
  { who: () => admin, role: 'Admin', method: 'POST', path: '/api/admin/banners', body: { message: 'Maintenance tonight' }, status: 201 },
  { who: () => admin, role: 'Admin', method: 'DELETE', path: '/api/admin/auth/oidc/settings', status: 204 },
  { who: () => admin, role: 'Admin', method: 'POST', path: '/api/admin/api-tokens', body: { tokenName: '{name}', type: 'admin' }, given: name('a'), status: 201 },
  {
    who: () => admin,
    role: 'Admin',
    method: 'POST',
    path: '/api/admin/projects/{project}/environments',
    body: { environment: 'production' },
    // A project like other, in development only.
    given: async () => ({ project: await createProject(t, { environments: ['development'] }) }),
    status: 200,
  },
  // Removing an environment from a project needs UPDATE_PROJECT there (its Owner), as in Unleash.
  {
    who: () => owner,
    role: 'Owner of shop',
    method: 'DELETE',
    path: '/api/admin/projects/shop/environments/{name}',
    given: async () => {
      const name = (await createEnvironment(t)).name as string
      await t.call('POST', '/api/admin/projects/shop/environments', { body: { environment: name } })
      return { name }
    },
    status: 200,
  },
  { who: () => admin, role: 'Admin', method: 'DELETE', path: `${F}/{flag}`, given: flagIn('shop'), status: 202 },
  { who: () => member, role: 'Member of shop', method: 'DELETE', path: '/api/admin/archive/{flag}', given: archivedIn('shop'), status: 200 },
  // Moving needs CREATE_FEATURE in the target too.
  { who: () => member, role: 'Member of shop', method: 'POST', path: `${F}/{flag}/changeProject`, body: { newProjectId: 'other' }, given: flagIn('shop'), status: 403 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/projects/other/features/{flag}/changeProject', body: { newProjectId: '{project}' }, given: async () => ({ ...(await flagIn('other')()), project: await createProject(t, { environments: ['development'] }) }), status: 200 },
  { who: () => member, role: 'Member of shop', method: 'POST', path: `${F}/{flag}/clone`, body: { name: '{name}' }, given: async () => ({ ...(await flagIn('shop')()), ...(await name('copy')()) }), status: 201 },
  { who: () => member, role: 'Member of shop', method: 'POST', path: '/api/admin/projects/other/features/{flag}/clone', body: { name: '{name}' }, given: async () => ({ ...(await flagIn('other')()), ...(await name('copy')()) }), status: 403 },
  { who: () => member, role: 'Member of shop', method: 'DELETE', path: '/api/admin/archive/{flag}', given: archivedIn('other'), status: 403 },
  { who: () => member, role: 'Member of shop', method: 'POST', path: '/api/admin/projects/shop/delete', body: { features: ['{flag}'] }, given: archivedIn('shop'), status: 200 },
  // Shop requires change requests in production, which reviving reaches.
  { who: () => member, role: 'Member of shop', method: 'POST', path: '/api/admin/projects/shop/revive', body: { features: ['{flag}'] }, given: archivedIn('shop'), status: 403 },
  { who: () => member, role: 'Member of shop', method: 'POST', path: '/api/admin/projects/other/revive', body: { features: ['{flag}'] }, given: archivedIn('other'), status: 403 },
  // Importing needs what validate lists in the project, and SKIP_CHANGE_REQUEST where the environment requires change requests.
  { who: () => member, role: 'Member of shop', method: 'POST', path: '/api/admin/features-batch/import', body: { project: 'shop', environment: 'development', data: { features: [{ name: '{name}' }], featureStrategies: [{ name: 'default', featureName: '{name}' }], tagTypes: [] } }, given: name('imported'), status: 200 },
  { who: () => member, role: 'Member of shop', method: 'POST', path: '/api/admin/features-batch/import', body: { project: 'shop', environment: 'production', data: { features: [{ name: '{name}' }], featureStrategies: [], tagTypes: [] } }, given: name('imported'), status: 403 },
  { who: () => member, role: 'Member of shop', method: 'POST', path: '/api/admin/features-batch/import', body: { project: 'other', environment: 'development', data: { features: [{ name: '{name}' }], featureStrategies: [], tagTypes: [] } }, given: name('imported'), status: 403 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/features-batch/import', body: { project: 'other', environment: 'development', data: { features: [{ name: '{name}' }], featureStrategies: [], tagTypes: [{ name: 'team' }], featureTags: [{ featureName: '{name}', tagType: 'team', tagValue: 'xy' }] } }, given: name('imported'), status: 200 },
  // The instance state, whole, is an admin's (as in Unleash): an Editor may neither read nor restore it.
  { who: () => editor, role: 'Editor', method: 'GET', path: '/api/admin/state/export', status: 403 },
  { who: () => owner, role: 'Owner of shop', method: 'POST', path: '/api/admin/state/import', body: { version: 4, features: [{ name: '{name}', project: 'shop' }] }, given: name('restored'), status: 403 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/state/import', body: { version: 4, tagTypes: [{ name: '{name}' }] }, given: name('restored'), status: 403 },
  { who: () => admin, role: 'Admin', method: 'GET', path: '/api/admin/state/export?featureToggles=false', status: 200 },
  { who: () => admin, role: 'Admin', method: 'POST', path: '/api/admin/state/import', body: { version: 4, tagTypes: [{ name: '{name}' }], features: [{ name: '{name}', project: 'other' }] }, given: name('restored'), status: 202 },
  // A tag type new to the registry needs CREATE_TAG_TYPE, which an Editor lacks.
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/features-batch/import', body: { project: 'other', environment: 'development', data: { features: [{ name: '{name}' }], featureStrategies: [], tagTypes: [{ name: '{name}' }], featureTags: [{ featureName: '{name}', tagType: '{name}', tagValue: 'x' }] } }, given: name('imported'), status: 403 },
  // A flag's links need UPDATE_FEATURE in its project (as Unleash): a Member of shop, not of other; an Editor anywhere.
  { who: () => member, role: 'Member of shop', method: 'POST', path: '/api/admin/projects/shop/features/{flag}/link', body: { url: 'https://example.com/member' }, given: flagIn('shop'), status: 204 },
  { who: () => member, role: 'Member of shop', method: 'POST', path: '/api/admin/projects/other/features/{flag}/link', body: { url: 'https://example.com/member' }, given: flagIn('other'), status: 403 },
  { who: () => editor, role: 'Editor', method: 'POST', path: '/api/admin/projects/other/features/{flag}/link', body: { url: 'https://example.com/editor' }, given: flagIn('other'), status: 204 },
]

/** `value` with each `{key}` in its strings replaced by what `given` made. */
const fill = (value: unknown, made: Record<string, string>): any =>
  value === undefined ? undefined : JSON.parse(JSON.stringify(value).replace(/\{(flag|project|name)\}/g, (_, key: string) => made[key]!))

describe('the role that is allowed', () => {
  for (const g of grants) {
    it(`${g.status < 300 ? 'lets' : 'refuses'} ${g.role}: ${g.method} ${g.path}`, async () => {
      const made = (await g.given?.()) ?? {}
      const res = await g.who().call(g.method, fill(g.path, made), { body: fill(g.body, made) })
      expect(res.status, res.text).toBe(g.status)
      if (g.status === 403) expect(res.body.name).toBe('NoAccessError')
    })
  }
})

describe('Unleash Edge’s upstream routes', () => {
  it('POST /edge/validate needs no token (Edge sends none) and answers only about the tokens sent', async () => {
    for (const token of [null, clientToken, frontendToken, viewerPat]) {
      const res = await t.call('POST', '/edge/validate', { token, body: { tokens: [clientToken] } })
      expect(res.status, `${token}: ${res.text}`).toBe(200)
      expect(res.body.tokens).toEqual([expect.objectContaining({ token: clientToken, type: 'client' })])
    }
  })

  it('POST /api/client/metrics/bulk takes client and admin tokens; frontend tokens, personal access tokens and sessions may not', async () => {
    const body = { applications: [], metrics: [] }
    expect((await t.call('POST', '/api/client/metrics/bulk', { token: clientToken, body })).status).toBe(202)
    expect((await t.call('POST', '/api/client/metrics/bulk', { body })).status).toBe(202)
    for (const token of [frontendToken, viewerPat]) {
      const res = await t.call('POST', '/api/client/metrics/bulk', { token, body })
      expect(res.status, res.text).toBe(403)
      expect(res.body.name).toBe('NoAccessError')
    }
    expect((await t.call('POST', '/api/client/metrics/bulk', { token: null, body })).status).toBe(401)
    expect((await admin.call('POST', '/api/client/metrics/bulk', { body })).status).toBe(401)
  })

  it('GET /api/admin/metrics/applications/{appName}/impact-metrics is read by any signed-in user, as the applications list', async () => {
    await t.call('POST', '/api/client/register', { token: clientToken, body: { appName: 'impact-reader-app', strategies: [], interval: 1, started: new Date().toISOString() } })
    await t.app.idle()
    expect((await viewer.call('GET', '/api/admin/metrics/applications/impact-reader-app/impact-metrics')).status).toBe(200)
    expect((await t.call('GET', '/api/admin/metrics/applications/impact-reader-app/impact-metrics', { token: clientToken })).status).toBe(403)
  })
})
