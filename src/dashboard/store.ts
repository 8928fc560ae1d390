import { and, asc, desc, eq, inArray, isNull, or, sql } from 'drizzle-orm'
import { events, favoriteFeatures, favoriteProjects, featureEnvironments, features, groupRoles, groupUsers, groups, projectMembers, projects, roles, users } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import { notFound } from '../core/errors.js'
import { avatarUrl } from '../users/avatar.js'
import { principalKey, type Principal } from '../core/principal.js'
import { potentiallyStaleSql } from '../projects/overview.js'
import { OWNER_ROLE_ID } from '../projects/access.js'
import { visibleProjectCondition } from '../projects/visibility.js'
import { flagHealth } from '../projects/insights.js'
import { adminUsers, userImageUrl } from '../users/store.js'

const MAX_FLAGS = 100

/**
 * Owners of the live projects the caller can read (`hidden`: those it may not, see projects/visibility.ts): users holding
 * Owner in one, and the members of groups holding it. One entry per user, `ownerType` always `user` (the interface
 * specification's; Unleash leaves group owners out of this list, so a project owned only through a group showed none).
 */
async function projectOwners(db: Db, hidden: readonly string[]) {
  const liveAndVisible = and(isNull(projects.archivedAt), visibleProjectCondition(projects.id, hidden))
  const rows = await db
    .select({ id: users.id, name: users.name, username: users.username, email: users.email })
    .from(users)
    .where(
      and(
        isNull(users.deletedAt),
        or(
          inArray(
            users.id,
            db
              .select({ id: projectMembers.userId })
              .from(projectMembers)
              .innerJoin(projects, eq(projects.id, projectMembers.projectId))
              .where(and(eq(projectMembers.roleId, OWNER_ROLE_ID), liveAndVisible)),
          ),
          inArray(
            users.id,
            db
              .select({ id: groupUsers.userId })
              .from(groupRoles)
              .innerJoin(groupUsers, eq(groupUsers.groupId, groupRoles.groupId))
              .innerJoin(projects, eq(projects.id, groupRoles.projectId))
              .where(and(eq(groupRoles.roleId, OWNER_ROLE_ID), liveAndVisible)),
          ),
        ),
      ),
    )
    .orderBy(asc(users.id))
  return Promise.all(
    rows.map(async (u) => ({
      ownerType: 'user' as const,
      name: u.name ?? u.username ?? u.email ?? 'unknown',
      imageUrl: await userImageUrl(u),
      email: u.email,
    })),
  )
}

/** Live projects the user has a role in (their own or a group's) or favorited, with health, members (directly or through groups) and live flags counted in SQL. */
async function personalProjects(db: Db, userId: number, principal: string, hidden: readonly string[], now: Date) {
  const rows = await db
    .select({
      id: projects.id,
      name: projects.name,
      memberCount: sql<number>`(select count(distinct m.user_id) from (
        select pm.user_id from ${projectMembers} pm where pm.project_id = ${projects}.id
        union select gu.user_id from ${groupRoles} gr join ${groupUsers} gu on gu.group_id = gr.group_id join ${users} u on u.id = gu.user_id and u.deleted_at is null where gr.project_id = ${projects}.id) m)`.mapWith(Number),
      featureCount: sql<number>`count(${features.name})`.mapWith(Number),
      stale: sql<number>`count(${features.name}) filter (where ${features.stale})`.mapWith(Number),
      potentiallyStale: sql<number>`count(${features.name}) filter (where ${potentiallyStaleSql(now)})`.mapWith(Number),
      favorite: sql<boolean>`exists (select 1 from ${favoriteProjects} fp where fp.principal = ${principal} and fp.project = ${projects}.id)`,
    })
    .from(projects)
    .leftJoin(features, and(eq(features.project, projects.id), isNull(features.archivedAt)))
    .where(
      and(
        isNull(projects.archivedAt),
        // A favorite outlives the caller's membership of a private project.
        visibleProjectCondition(projects.id, hidden),
        or(
          inArray(projects.id, db.select({ id: projectMembers.projectId }).from(projectMembers).where(eq(projectMembers.userId, userId))),
          inArray(projects.id, db.select({ id: groupRoles.projectId }).from(groupRoles).innerJoin(groupUsers, eq(groupUsers.groupId, groupRoles.groupId)).where(eq(groupUsers.userId, userId))),
          inArray(projects.id, db.select({ id: favoriteProjects.project }).from(favoriteProjects).where(eq(favoriteProjects.principal, principal))),
        ),
      ),
    )
    .groupBy(projects.id)
    .orderBy(asc(projects.name), asc(projects.id))
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    // The same formula as the project overview's health.
    health: r.featureCount === 0 ? 100 : Math.max(0, Math.min(100, Math.round(100 - (r.stale / r.featureCount) * 100 - (r.potentiallyStale / r.featureCount) * 100))),
    memberCount: r.memberCount,
    featureCount: r.featureCount,
    favorite: r.favorite,
  }))
}

/** Live flags the user created or favorited, newest first. */
async function personalFlags(db: Db, userId: number, principal: string, hidden: readonly string[]) {
  return db
    .select({
      name: features.name,
      project: features.project,
      type: features.type,
      favorite: sql<boolean>`exists (select 1 from ${favoriteFeatures} ff where ff.principal = ${principal} and ff.feature_name = ${features.name})`,
    })
    .from(features)
    .where(
      and(
        isNull(features.archivedAt),
        visibleProjectCondition(features.project, hidden),
        or(
          eq(features.createdByUserId, userId),
          inArray(features.name, db.select({ name: favoriteFeatures.featureName }).from(favoriteFeatures).where(eq(favoriteFeatures.principal, principal))),
        ),
      ),
    )
    .orderBy(desc(features.createdAt), asc(features.name))
    .limit(MAX_FLAGS)
}

/** The personal dashboard. A caller that is not a user (an admin token) has no projects or flags of its own. */
export async function personalDashboard(db: Db, principal: Principal, hidden: readonly string[], now: Date) {
  const key = principalKey(principal)
  const [admins, owners, ownProjects, flags] = await Promise.all([
    adminUsers(db),
    projectOwners(db, hidden),
    principal.kind === 'user' ? personalProjects(db, principal.userId, key, hidden, now) : [],
    principal.kind === 'user' ? personalFlags(db, principal.userId, key, hidden) : [],
  ])
  return { admins, projectOwners: owners, projects: ownProjects, flags }
}

const LATEST_EVENTS = 10

/**
 * GET /api/admin/personal-dashboard/{projectId}: the project's owners (users and groups holding Owner; `system` when
 * none), the caller's roles in it (their own and their groups'), its latest events, onboarding status and health.
 * Flagpost keeps no history of health, so the windows' averages are null.
 */
export async function personalDashboardProject(db: Db, principal: Principal, projectId: string, now: Date) {
  const userId = principal.kind === 'user' ? principal.userId : -1
  const [[project], ownerUsers, ownerGroups, roleRows, latest, counts] = await Promise.all([
    queryRows<{ seen: boolean; firstFlag: string | null }>(
      db,
      sql`select exists (select 1 from ${featureEnvironments} fe join ${features} f on f.name = fe.feature_name where f.project = p.id and fe.last_seen_at is not null) as seen,
        (select f.name from ${features} f where f.project = p.id order by f.created_at, f.name limit 1) as "firstFlag"
        from ${projects} p where p.id = ${projectId} and p.archived_at is null`,
    ),
    queryRows<{ id: number; name: string | null; username: string | null; email: string | null }>(
      db,
      sql`select u.id, u.name, u.username, u.email from ${users} u join ${projectMembers} m on m.user_id = u.id
        where m.project_id = ${projectId} and m.role_id = ${OWNER_ROLE_ID} and u.deleted_at is null order by u.id`,
    ),
    queryRows<{ name: string }>(db, sql`select g.name from ${groups} g join ${groupRoles} gr on gr.group_id = g.id where gr.project_id = ${projectId} and gr.role_id = ${OWNER_ROLE_ID} order by g.name`),
    queryRows<{ id: number; name: string; type: string }>(
      db,
      sql`select distinct r.id, r.name, r.type from ${roles} r where r.id in (
          select role_id from ${projectMembers} where project_id = ${projectId} and user_id = ${userId}
          union select gr.role_id from ${groupRoles} gr join ${groupUsers} gu on gu.group_id = gr.group_id where gr.project_id = ${projectId} and gu.user_id = ${userId})
        order by r.id`,
    ),
    queryRows<{ id: number; createdBy: string; createdAt: string }>(
      db,
      sql`select id::int as id, created_by as "createdBy", to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt" from ${events}
        where project = ${projectId} and id > coalesce((select max(d.id) from ${events} d where d.type = 'project-deleted' and d.project = ${projectId}), 0)
        order by id desc limit ${LATEST_EVENTS}`,
    ),
    flagHealth(db, projectId, now),
  ])
  if (!project) throw notFound(`Could not find project ${projectId}`)
  const owners = [
    ...(await Promise.all(
      ownerUsers.map(async (u) => ({ ownerType: 'user' as const, name: u.name ?? u.username ?? u.email ?? `user-${u.id}`, imageUrl: await userImageUrl(u), email: u.email })),
    )),
    ...ownerGroups.map((g) => ({ ownerType: 'group' as const, name: g.name })),
  ]
  return {
    owners: owners.length > 0 ? owners : [{ ownerType: 'system' as const }],
    roles: roleRows.map((r) => ({ id: r.id, name: r.name, type: r.type === 'custom' ? ('custom' as const) : ('project' as const) })),
    latestEvents: await Promise.all(latest.map(async (e) => ({ id: e.id, summary: null, createdBy: e.createdBy, createdByImageUrl: await avatarUrl(e.createdBy), createdAt: e.createdAt }))),
    onboardingStatus: project.seen
      ? { status: 'onboarded' as const }
      : project.firstFlag
        ? { status: 'first-flag-created' as const, feature: project.firstFlag }
        : { status: 'onboarding-started' as const },
    insights: {
      avgHealthCurrentWindow: null,
      avgHealthPastWindow: null,
      totalFlags: counts.total,
      activeFlags: counts.active,
      staleFlags: counts.stale,
      potentiallyStaleFlags: counts.potentiallyStale,
      health: counts.health,
      technicalDebt: 100 - counts.health,
    },
  }
}
