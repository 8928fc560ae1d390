import type { TestApp } from './app.js'
import { fresh, ok } from './factories.js'
import { createSignedInUser } from './users.js'

/** The predefined project roles' ids. */
export const OWNER = 4
export const MEMBER = 5

/** Signed-in users, custom roles and groups made through the admin routes of the app `app()` answers (set in beforeAll). */
export function grantHelpers(app: () => TestApp) {
  return {
    user: (rootRole: string | number = 'Viewer') => createSignedInUser(app(), fresh('user'), rootRole),
    createRole: async (permissions: unknown[]) => (await ok(app(), 'POST', '/api/admin/roles', { name: fresh('role'), permissions })).body.roles.id as number,
    createGroup: async (users: { id: number }[] = []) =>
      (await ok(app(), 'POST', '/api/admin/groups', { name: fresh('team'), users: users.map((u) => ({ user: { id: u.id } })) })).body.id as number,
  }
}
