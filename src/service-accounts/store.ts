import { and, asc, eq, isNull, sql } from 'drizzle-orm'
import { actionSets, apiTokens, projectMembers, roles, users } from '../../schema/index.js'
import { rowText, together, untilUnchanged, type Db } from '../db.js'
import { conflict, nameExists, notFound } from '../core/errors.js'
import { eventsStatement, guardPassed, recordEvents } from '../events/store.js'
import type { Author } from '../core/principal.js'
import { listRootRoles, requireRole, roleNamed, userImageUrl } from '../users/store.js'
import { patsOf, type PatView } from '../api-tokens/personal-access-tokens.js'
import type { CreateServiceAccount, ServiceAccount, UpdateServiceAccount } from './schemas.js'

/*
 * Service accounts are rows of `users` with `is_service` (as in Unleash): a name, a username and a root role, no
 * password and no e-mail, so they never sign in. They act through their tokens, personal access tokens of theirs
 * (src/api-tokens/personal-access-tokens.ts), with their root role's and project roles' permissions. Users' routes
 * and listings leave them out.
 */

type UserRow = typeof users.$inferSelect

const p = (name: string) => sql.placeholder(name)

const live = (id: number) => and(eq(users.id, id), eq(users.isService, true), isNull(users.deletedAt))
const missing = (id: number) => notFound(`Could not find service account ${id}`)

async function accountView(row: UserRow, tokens: PatView[]): Promise<ServiceAccount> {
  return {
    id: row.id,
    name: row.name,
    username: row.username ?? '',
    rootRole: row.rootRoleId,
    imageUrl: await userImageUrl(row),
    createdAt: row.createdAt.toISOString(),
    seenAt: null,
    isAPI: false,
    tokens,
  }
}

/** What events say of a service account. */
const eventData = (row: UserRow) => ({ id: row.id, name: row.name, username: row.username, rootRole: row.rootRoleId, createdAt: row.createdAt.toISOString() })

/** Every service account not deleted, by id, with its tokens, and the root roles they may hold: one round trip. */
export async function listServiceAccounts(db: Db) {
  const [rows, rootRoles] = await together(db, [
    (q) => q.select().from(users).where(and(eq(users.isService, true), isNull(users.deletedAt))).orderBy(asc(users.id)),
    (q) => listRootRoles(q),
  ])
  const tokens = await patsOf(db, rows.map((r) => r.id))
  return { serviceAccounts: await Promise.all(rows.map((row) => accountView(row, tokens.get(row.id) ?? []))), rootRoles }
}

/**
 * POST /api/admin/service-account: the role is read with the id the account takes (for the event), then the account
 * and `service-account-created` are one statement. A username any user or service account has is a 409.
 */
export async function createServiceAccount(db: Db, caller: Author, input: CreateServiceAccount): Promise<ServiceAccount> {
  const { actor, now } = caller
  const rows = await db.select({ roleId: roles.id, id: sql<number>`nextval(pg_get_serial_sequence('users', 'id'))::int` }).from(roles).where(roleNamed(input.rootRole))
  const { roleId, id } = requireRole(rows, input.rootRole)
  const row: UserRow = { id, name: input.name, username: input.username, email: null, passwordHash: null, rootRoleId: roleId, loginAttempts: 0, isService: true, seenAt: null, createdAt: now, deletedAt: null, emailUnproven: false, ssoIssuer: null, ssoSubject: null }
  const written = await recordEvents(db, actor, now, [{ type: 'service-account-created', data: eventData(row) }], {
    alongside: [db.insert(users).values(row).onConflictDoNothing().returning({ id: users.id })],
    guarded: true,
  })
  if (written === 0) throw nameExists(`A user or service account with the username ${input.username} already exists`)
  return accountView(row, [])
}

/**
 * PUT /api/admin/service-account/{id}: changes the fields given. The account and the role are read together, then the
 * change and `service-account-updated` are one statement, made only while the account is exactly as read.
 */
export async function updateServiceAccount(db: Db, caller: Author, id: number, input: UpdateServiceAccount): Promise<ServiceAccount> {
  const { actor, now } = caller
  return untilUnchanged('The service account', async () => {
    const [[read], roleRows, tokens] = await together(db, [
      (q) => q.select({ account: users, snapshot: rowText(users) }).from(users).where(live(id)),
      (q) => (input.rootRole === undefined ? Promise.resolve([]) : q.select({ id: roles.id }).from(roles).where(roleNamed(input.rootRole))),
      (q) => patsOf(q, [id]),
    ])
    if (!read) throw missing(id)
    const before = read.account
    const role = input.rootRole === undefined ? undefined : requireRole(roleRows, input.rootRole)
    const after: UserRow = { ...before, name: input.name ?? before.name, rootRoleId: role?.id ?? before.rootRoleId }
    const update = db
      .update(users)
      .set({ name: after.name, rootRoleId: after.rootRoleId })
      .where(and(live(id), sql`${rowText(users)} = ${read.snapshot}`))
      .returning({ id: users.id })
    const written = await recordEvents(db, actor, now, [{ type: 'service-account-updated', data: eventData(after), preData: eventData(before) }], { alongside: [update], guarded: true })
    return written > 0 ? accountView(after, tokens.get(id) ?? []) : undefined
  })
}

/** Deleting a service account: its row loses its username (free again), its tokens and project roles go, only while it is as read. */
const deleteStatement = eventsStatement('flagpost_delete_service_account', {
  alongside: [
    sql`update ${users} set deleted_at = ${p('now')}::timestamptz, username = null
      where id = ${p('id')} and is_service and deleted_at is null and ${rowText(users)} = ${p('snapshot')}
        and not exists (select from ${actionSets} a where a.actor_id = ${p('id')}) returning id`,
  ],
  guarded: true,
  unguarded: [sql`delete from ${apiTokens} where user_id = ${p('id')} and ${guardPassed}`, sql`delete from ${projectMembers} where user_id = ${p('id')} and ${guardPassed}`],
})

/**
 * DELETE /api/admin/service-account/{id}: the row stays (events name it) but its tokens stop working at once, with the
 * account, in the statement that writes `service-account-deleted`; refused (409) while action sets run as it.
 */
export async function deleteServiceAccount(db: Db, caller: Author, id: number): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged('The service account', async () => {
    const [[read], runAs] = await together(db, [
      (q) => q.select({ account: users, snapshot: rowText(users) }).from(users).where(live(id)),
      (q) => q.select({ project: actionSets.project, name: actionSets.name }).from(actionSets).where(eq(actionSets.actorId, id)).orderBy(asc(actionSets.id)),
    ])
    if (!read) throw missing(id)
    if (runAs.length > 0) throw conflict(`Action sets run as service account ${id}: ${runAs.map((a) => `${a.name} (project ${a.project})`).join(', ')}. Delete them or give them another service account first`)
    const { written } = await deleteStatement(db, actor, now, [{ type: 'service-account-deleted', preData: eventData(read.account) }], { id, snapshot: read.snapshot, now: now.toISOString() })
    return written > 0 || undefined
  })
}
