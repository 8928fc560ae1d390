import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addToProject, createFlag, createProject, enableFlag, fresh, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

/*
 * A deleted project's id may be used again. What happened in the deleted project stays with it: a private project's
 * events are not the history of a project made again with its id (in the event search, a flag's history, the
 * project's activity), and a deleted flag's authors are not a new flag's collaborators.
 */

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const user = (rootRole: string | number = 'Viewer') => createSignedInUser(t, fresh('user'), rootRole)

/** A private project with a flag switched on, made and changed by `author` (a member), then deleted by the admin. */
async function deletedPrivateProject(author: TestUser) {
  const project = await createProject(t, { mode: 'private' })
  await addToProject(t, project, author.id, 'Owner')
  const flag = fresh('secret-flag')
  await ok(author, 'POST', `/api/admin/projects/${project}/features`, { name: flag, description: 'the secret launch' })
  await enableFlag(author, flag, 'development', project)
  await ok(t, 'POST', `/api/admin/projects/${project}/features/${flag}/environments/development/off`)
  await ok(t, 'DELETE', `/api/admin/projects/${project}/features/${flag}`)
  await ok(t, 'DELETE', `/api/admin/projects/${project}`)
  return { project, flag }
}

type EventRow = { id: number; type: string; project: string | null; featureName: string | null }
const search = async (who: { call: TestApp['call'] | TestUser['call'] }, query: string) => {
  const res = await who.call('GET', `/api/admin/search/events?${query}`)
  expect(res.status, res.text).toBe(200)
  return { events: res.body.events as EventRow[], total: res.body.total as number }
}
const lastEventId = async () => (await t.query<{ id: number }>('select max(id)::int as id from events'))[0]!.id

describe('a project made again with a deleted private project’s id', () => {
  it('does not show the deleted project’s events to the new project’s members, in the search, by project or unfiltered', async () => {
    const author = await user('Viewer')
    const { project, flag } = await deletedPrivateProject(author)
    const bornAt = await lastEventId()
    const member = await user('Viewer')
    await createProject(t, { id: project, mode: 'private' })
    await addToProject(t, project, member.id, 'Member')
    const mine = await search(member, `project=IS:${project}`)
    expect(mine.events.length).toBeGreaterThan(0)
    expect(mine.events.every((e) => e.id > bornAt), JSON.stringify(mine.events)).toBe(true)
    expect(mine.total).toBe(mine.events.length)
    const all = await search(member, 'limit=1000')
    expect(all.events.filter((e) => e.project === project && e.id <= bornAt)).toEqual([])
    expect(all.events.filter((e) => e.featureName === flag)).toEqual([])
    expect((await search(member, `feature=IS:${flag}`)).total).toBe(0)
    expect((await search(member, 'query=the%20secret%20launch')).events).toEqual([])
  })

  it('as an open project, does not show them to anyone who could not read the deleted one', async () => {
    const author = await user('Viewer')
    const { project, flag } = await deletedPrivateProject(author)
    const bornAt = await lastEventId()
    await createProject(t, { id: project })
    const viewer = await user('Viewer')
    const seen = await search(viewer, `project=IS:${project}`)
    expect(seen.events.map((e) => e.type)).toEqual(['project-created'])
    expect(seen.events.every((e) => e.id > bornAt)).toBe(true)
    expect(seen.total).toBe(1)
    // A flag made again with the deleted flag's name: its history is its own.
    await createFlag(t, { name: flag }, project)
    const history = await viewer.call('GET', `/api/admin/events/${flag}`)
    expect(history.status, history.text).toBe(200)
    expect(history.body.events.map((e: EventRow) => e.type)).toEqual(['feature-created'])
    expect(history.body.totalEvents).toBe(1)
  })

  it('leaves the whole history to those who see every project (admins, Editors): the audit trail is kept', async () => {
    const author = await user('Viewer')
    const { project } = await deletedPrivateProject(author)
    await createProject(t, { id: project })
    const editor = await user('Editor')
    for (const who of [t, editor]) {
      const types = (await search(who, `project=IS:${project}`)).events.map((e) => e.type)
      expect(types).toContain('project-deleted')
      expect(types).toContain('feature-created')
      expect(types.filter((type) => type === 'project-created')).toHaveLength(2)
    }
  })

  it('counts only its own life in the project’s activity', async () => {
    const author = await user('Viewer')
    const { project } = await deletedPrivateProject(author)
    await createProject(t, { id: project })
    const { stats } = (await ok(t, 'GET', `/api/admin/projects/${project}/overview`)).body
    expect(stats.projectActivityCurrentWindow).toBe(1) // project-created
  })

  it('does not name the deleted flag’s authors as a flag’s collaborators when a flag takes its name', async () => {
    const author = await user('Viewer')
    const { project, flag } = await deletedPrivateProject(author)
    await createProject(t, { id: project })
    await createFlag(t, { name: flag }, project)
    const { collaborators } = (await ok(t, 'GET', `/api/admin/projects/${project}/features/${flag}`)).body
    expect(collaborators.users.map((u: { name: string }) => u.name)).not.toContain(author.username)
    expect(collaborators.users.map((u: { id: number | null }) => u.id)).not.toContain(author.id)
  })

  it('sends nothing of the new project to the integrations that named the deleted one: they stop naming it, deleted when it was their only one', async () => {
    const author = await user('Viewer')
    const project = await createProject(t, { mode: 'private' })
    await addToProject(t, project, author.id, 'Owner')
    const other = await createProject(t)
    const hook = (projects: string[]) =>
      ok(t, 'POST', '/api/admin/addons', { provider: 'webhook', enabled: true, parameters: { url: 'https://hooks.example.invalid/flagpost' }, events: ['feature-created'], projects }).then((r) => r.body.id as number)
    const alone = await hook([project])
    const shared = await hook([project, other])
    await ok(t, 'DELETE', `/api/admin/projects/${project}`)
    const addon = async (id: number) => (await ok(t, 'GET', '/api/admin/addons')).body.addons.find((a: { id: number }) => a.id === id)
    expect(await addon(alone)).toBeUndefined()
    expect(await addon(shared)).toMatchObject({ enabled: true, projects: [other] })
    const changed = await t.query<{ type: string; data: any; pre_data: any }>(
      `select type, data, pre_data from events where type like 'addon-config-%' and (coalesce(data, pre_data)->>'id')::int = any($1) and type <> 'addon-config-created' order by id`,
      [[alone, shared]],
    )
    expect(changed.map((e) => [e.type, e.pre_data.projects, e.data?.projects ?? null])).toEqual([
      ['addon-config-deleted', [project], null],
      ['addon-config-updated', [project, other], [other]],
    ])
    await createProject(t, { id: project, mode: 'private' })
    const flag = (await createFlag(t, {}, project)).name as string
    const queued = await t.query(`select o.integration_id from integration_outbox o join events e on e.id = o.event_id where e.feature_name = $1`, [flag])
    expect(queued).toEqual([])
  })

  it('gives the new project’s members a true total even where the deleted project’s total was cached', async () => {
    const member = await user('Viewer')
    const project = await createProject(t, { mode: 'private' })
    await addToProject(t, project, member.id, 'Member')
    // A long history (more than the count cache's threshold), as years of changes would leave.
    await t.query(
      `insert into events (type, created_by, project, data) select 'feature-metadata-updated', 'test-admin', $1, jsonb_build_object('n', n) from generate_series(1, 1100) n`,
      [project],
    )
    const query = `project=IS:${project}&limit=5`
    const before = await search(member, query)
    expect(before.total).toBeGreaterThan(1100)
    expect((await t.query<{ n: number }>('select count(*)::int as n from event_count_cache')).at(0)!.n).toBeGreaterThan(0)
    await ok(t, 'DELETE', `/api/admin/projects/${project}`)
    await createProject(t, { id: project, mode: 'private' })
    await addToProject(t, project, member.id, 'Member')
    const after = await search(member, query)
    expect(after.events.map((e) => e.type).sort()).toEqual(['project-access-added', 'project-created'])
    expect(after.total).toBe(2)
  })

  it('hides nothing of an open project deleted and made again', async () => {
    const project = await createProject(t)
    await ok(t, 'DELETE', `/api/admin/projects/${project}`)
    await createProject(t, { id: project })
    const viewer = await user('Viewer')
    expect((await search(viewer, `project=IS:${project}`)).events.map((e) => e.type)).toEqual(['project-created', 'project-deleted', 'project-created'])
  })
})
