import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addToProject, createFlag, createProject, fresh, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
let viewer: TestUser
beforeAll(async () => {
  t = await createTestApp()
  viewer = await createSignedInUser(t, 'vic.viewer', 'Viewer')
})
afterAll(() => t.close())

const linkPath = (flag: string, project = 'default') => `/api/admin/projects/${project}/features/${flag}/link`
const flagOf = async (flag: string, project = 'default') => (await ok(t, 'GET', `/api/admin/projects/${project}/features/${flag}`)).body
const linksOf = async (flag: string, project = 'default') => (await flagOf(flag, project)).links as { id: string; url: string; title: string | null }[]
const eventsOf = (flag: string) => t.query<{ type: string; project: string; data: any; pre_data: any; tags: any }>(`select type, project, data, pre_data, tags from events where feature_name = $1 and type like 'feature-link-%' order by id`, [flag])
const newFlag = async (project = 'default') => (await createFlag(t, { name: fresh('linked') }, project)).name as string

describe('adding, changing and removing links', () => {
  it('adds a link (204, no body), shown in the flag as { id, url, title }, with feature-link-added', async () => {
    const flag = await newFlag()
    const res = await t.call('POST', linkPath(flag), { body: { url: 'https://github.com/search?q=cleanup&type=code', title: 'Code search' } })
    expect(res.status, res.text).toBe(204)
    expect(res.text).toBe('')
    const links = await linksOf(flag)
    expect(links).toEqual([{ id: expect.any(String), url: 'https://github.com/search?q=cleanup&type=code', title: 'Code search' }])
    expect(await eventsOf(flag)).toEqual([{ type: 'feature-link-added', project: 'default', data: { url: 'https://github.com/search?q=cleanup&type=code', title: 'Code search' }, pre_data: null, tags: [] }])
  })

  it('shows links oldest first; a flag without links has links: []', async () => {
    const flag = await newFlag()
    expect(await linksOf(flag)).toEqual([])
    for (const n of [1, 2, 3]) await ok(t, 'POST', linkPath(flag), { url: `https://example.org/${n}` })
    expect((await linksOf(flag)).map((l) => [l.url, l.title])).toEqual([
      ['https://example.org/1', null],
      ['https://example.org/2', null],
      ['https://example.org/3', null],
    ])
  })

  it('normalizes the URL as Unleash does: https assumed, credentials, www. and a trailing slash dropped', async () => {
    const flag = await newFlag()
    await ok(t, 'POST', linkPath(flag), { url: 'example.com/docs/' })
    await ok(t, 'POST', linkPath(flag), { url: 'http://user:secret@www.Example.org/' })
    await ok(t, 'POST', linkPath(flag), { url: 'localhost:8080/status' })
    expect((await linksOf(flag)).map((l) => l.url)).toEqual(['https://example.com/docs', 'http://example.org', 'https://localhost:8080/status'])
  })

  it('reads a named http(s) scheme as browsers do (http:\\\\host and http:host are http://host), never as a host named http', async () => {
    const flag = await newFlag()
    await ok(t, 'POST', linkPath(flag), { url: 'http:\\\\evil.example\\path' })
    await ok(t, 'POST', linkPath(flag), { url: 'https:docs.example' })
    expect((await linksOf(flag)).map((l) => l.url)).toEqual(['http://evil.example/path', 'https://docs.example'])
  })

  it('updates a link (204) with feature-link-updated holding the new and the old url and title', async () => {
    const flag = await newFlag()
    await ok(t, 'POST', linkPath(flag), { url: 'https://old.example', title: 'Old' })
    const [link] = await linksOf(flag)
    const res = await t.call('PUT', `${linkPath(flag)}/${link!.id}`, { body: { url: 'https://new.example/page', title: 'New' } })
    expect(res.status, res.text).toBe(204)
    expect(await linksOf(flag)).toEqual([{ id: link!.id, url: 'https://new.example/page', title: 'New' }])
    expect((await eventsOf(flag)).at(-1)).toMatchObject({ type: 'feature-link-updated', data: { url: 'https://new.example/page', title: 'New' }, pre_data: { url: 'https://old.example', title: 'Old' } })
  })

  it('removes a link (204) with feature-link-removed holding what went', async () => {
    const flag = await newFlag()
    await ok(t, 'POST', linkPath(flag), { url: 'https://gone.example', title: 'Gone' })
    const [link] = await linksOf(flag)
    const res = await t.call('DELETE', `${linkPath(flag)}/${link!.id}`)
    expect(res.status, res.text).toBe(204)
    expect(await linksOf(flag)).toEqual([])
    expect((await eventsOf(flag)).at(-1)).toMatchObject({ type: 'feature-link-removed', data: null, pre_data: { url: 'https://gone.example', title: 'Gone' } })
  })

  it("carries the flag's tags on its link events, as other flag events do", async () => {
    const flag = (await createFlag(t, { name: fresh('tagged'), tags: [{ type: 'simple', value: 'linky' }] })).name
    await ok(t, 'POST', linkPath(flag), { url: 'https://tagged.example' })
    expect((await eventsOf(flag))[0]!.tags).toEqual([{ type: 'simple', value: 'linky' }])
  })

  it('deletes the links with the flag', async () => {
    const flag = await newFlag()
    await ok(t, 'POST', linkPath(flag), { url: 'https://kept-until-deleted.example' })
    await ok(t, 'DELETE', `/api/admin/projects/default/features/${flag}`)
    expect((await flagOf(flag)).links).toHaveLength(1)
    await ok(t, 'DELETE', `/api/admin/archive/${flag}`)
    expect(await t.query('select * from feature_links where feature_name = $1', [flag])).toEqual([])
  })
})

describe('refused input', () => {
  it.each([
    ['javascript:', 'javascript:alert(document.cookie)'],
    ['javascript://', 'javascript://%0aalert(1)'],
    ['data:', 'data:text/html,<script>alert(1)</script>'],
    ['ftp://', 'ftp://files.example.com/x'],
    ['not a URL', 'https://exa mple.com'],
    ['empty', ''],
    ['too long', `https://example.com/${'a'.repeat(2100)}`],
  ])('refuses a %s URL with 400 ValidationError, storing nothing', async (_what, url) => {
    const flag = await newFlag()
    const res = await t.call('POST', linkPath(flag), { body: { url } })
    expect(res.status, res.text).toBe(400)
    expect(res.body).toMatchObject({ id: expect.any(String), name: 'ValidationError', message: expect.any(String) })
    if (/^[a-z]+:(?!\/\/[a-z])/.test(url) || url.startsWith('javascript')) expect(res.body.message).toContain('only http and https links are allowed')
    expect(await linksOf(flag)).toEqual([])
    expect(await eventsOf(flag)).toEqual([])
  })

  it('refuses an update to a javascript: URL, keeping the link', async () => {
    const flag = await newFlag()
    await ok(t, 'POST', linkPath(flag), { url: 'https://safe.example' })
    const [link] = await linksOf(flag)
    const res = await t.call('PUT', `${linkPath(flag)}/${link!.id}`, { body: { url: 'javascript:alert(1)' } })
    expect(res.status).toBe(400)
    expect((await linksOf(flag))[0]!.url).toBe('https://safe.example')
  })

  it('refuses a title over 250 characters, a body without url and a non-JSON body', async () => {
    const flag = await newFlag()
    expect((await t.call('POST', linkPath(flag), { body: { url: 'https://a.example', title: 'x'.repeat(251) } })).status).toBe(400)
    expect((await t.call('POST', linkPath(flag), { body: { title: 'no url' } })).body.name).toBe('ValidationError')
    const raw = await t.app.request(linkPath(flag), { method: 'POST', headers: { authorization: t.adminToken, 'content-type': 'text/plain' }, body: 'https://a.example' })
    expect(raw.status).toBe(415)
    expect(await linksOf(flag)).toEqual([])
  })

  it('holds at most 10 links per flag: the 11th is refused with 403 and nothing written', async () => {
    const flag = await newFlag()
    for (let n = 0; n < 10; n++) await ok(t, 'POST', linkPath(flag), { url: `https://example.net/${n}` })
    const res = await t.call('POST', linkPath(flag), { body: { url: 'https://example.net/11' } })
    expect(res.status, res.text).toBe(403)
    expect(res.body.message).toContain('Too many links (10)')
    expect(await linksOf(flag)).toHaveLength(10)
    expect(await eventsOf(flag)).toHaveLength(10)
  })

  it('holds the limit under concurrent adds: 12 at once leave 10 links and 10 events', async () => {
    const flag = await newFlag()
    const answers = await Promise.all([...Array(12).keys()].map((n) => t.call('POST', linkPath(flag), { body: { url: `https://race.example/${n}` } })))
    expect(answers.filter((a) => a.status === 204)).toHaveLength(10)
    expect(answers.filter((a) => a.status !== 204).every((a) => a.status === 403 || a.status === 409)).toBe(true)
    expect(await linksOf(flag)).toHaveLength(10)
    expect(await eventsOf(flag)).toHaveLength(10)
  })

  it('answers 404 for an unknown flag, an archived flag, a flag of another project and an unknown link', async () => {
    const other = await createProject(t)
    const foreign = await newFlag(other)
    const archived = await newFlag()
    await ok(t, 'DELETE', `/api/admin/projects/default/features/${archived}`)
    expect((await t.call('POST', linkPath('no-such-flag'), { body: { url: 'https://a.example' } })).status).toBe(404)
    expect((await t.call('POST', linkPath(archived), { body: { url: 'https://a.example' } })).status).toBe(404)
    expect((await t.call('POST', linkPath(foreign), { body: { url: 'https://a.example' } })).status).toBe(404)
    const flag = await newFlag()
    const put = await t.call('PUT', `${linkPath(flag)}/no-such-link`, { body: { url: 'https://a.example' } })
    expect(put.status).toBe(404)
    expect(put.body.name).toBe('NotFoundError')
    expect((await t.call('DELETE', `${linkPath(flag)}/no-such-link`)).status).toBe(404)
  })

  it("answers 404 for a link of another flag, even one the caller may change: a link id reaches only its own flag's links", async () => {
    const other = await createProject(t)
    const foreign = await newFlag(other)
    await ok(t, 'POST', linkPath(foreign, other), { url: 'https://foreign.example' })
    const [link] = await linksOf(foreign, other)
    const mine = await newFlag()
    expect((await t.call('PUT', `${linkPath(mine)}/${link!.id}`, { body: { url: 'https://hijack.example' } })).status).toBe(404)
    expect((await t.call('DELETE', `${linkPath(mine)}/${link!.id}`)).status).toBe(404)
    expect(await linksOf(foreign, other)).toEqual([link])
  })
})

describe('who may change links', () => {
  it('refuses a Viewer with 403 on all three routes', async () => {
    const flag = await newFlag()
    await ok(t, 'POST', linkPath(flag), { url: 'https://kept.example' })
    const [link] = await linksOf(flag)
    expect((await viewer.call('POST', linkPath(flag), { body: { url: 'https://a.example' } })).status).toBe(403)
    expect((await viewer.call('PUT', `${linkPath(flag)}/${link!.id}`, { body: { url: 'https://a.example' } })).status).toBe(403)
    expect((await viewer.call('DELETE', `${linkPath(flag)}/${link!.id}`)).status).toBe(403)
    expect(await linksOf(flag)).toEqual([link])
  })

  it("hides a private project's flags and links: a Viewer who is no member gets 404 reading or changing them, a member can", async () => {
    const vault = await createProject(t, { mode: 'private' })
    const flag = await newFlag(vault)
    await ok(t, 'POST', linkPath(flag, vault), { url: 'https://private.example/runbook', title: 'Runbook' })
    const [link] = await linksOf(flag, vault)
    expect((await viewer.call('GET', `/api/admin/projects/${vault}/features/${flag}`)).status).toBe(404)
    expect((await viewer.call('POST', linkPath(flag, vault), { body: { url: 'https://a.example' } })).status).toBe(404)
    expect((await viewer.call('PUT', `${linkPath(flag, vault)}/${link!.id}`, { body: { url: 'https://a.example' } })).status).toBe(404)
    expect((await viewer.call('DELETE', `${linkPath(flag, vault)}/${link!.id}`)).status).toBe(404)
    const member = await createSignedInUser(t, fresh('member'), 'Viewer')
    await addToProject(t, vault, member.id, 'Member')
    expect((await member.call('POST', linkPath(flag, vault), { body: { url: 'https://member.example' } })).status).toBe(204)
    expect((await linksOf(flag, vault)).map((l) => l.url)).toEqual(['https://private.example/runbook', 'https://member.example'])
  })

  it('is not held by change requests: links are metadata SDKs never see', async () => {
    const project = await createProject(t)
    await ok(t, 'PUT', `/api/admin/projects/${project}/change-requests/config`, { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 1 })
    const editor = await createSignedInUser(t, fresh('editor'), 'Editor')
    await addToProject(t, project, editor.id, 'Member')
    const flag = await newFlag(project)
    const res = await editor.call('POST', linkPath(flag, project), { body: { url: 'https://cr.example' } })
    expect(res.status, res.text).toBe(204)
  })
})

describe('flag export and import', () => {
  const importBody = (project: string, features: string[], links: unknown) => ({ project, environment: 'development', data: { features: features.map((name) => ({ name })), featureStrategies: [], tagTypes: [], links } })

  it("exports the flags' links as Unleash does ({ feature, links: [{ url, title }] }), and an import into a fresh instance recreates them", async () => {
    const flag = await newFlag()
    await ok(t, 'POST', linkPath(flag), { url: 'https://a.example/one', title: 'One' })
    await ok(t, 'POST', linkPath(flag), { url: 'https://a.example/two' })
    const exported = (await ok(t, 'POST', '/api/admin/features-batch/export', { environment: 'development', features: [flag] })).body
    expect(exported.links).toEqual([{ feature: flag, links: [{ url: 'https://a.example/one', title: 'One' }, { url: 'https://a.example/two', title: null }] }])

    const other = await createTestApp()
    try {
      const res = await other.call('POST', '/api/admin/features-batch/import', { body: { project: 'default', environment: 'development', data: exported } })
      expect(res.status, res.text).toBeLessThan(300)
      const linked = (await other.call('GET', `/api/admin/projects/default/features/${flag}`)).body.links
      expect(linked.map((l: any) => [l.url, l.title])).toEqual([['https://a.example/one', 'One'], ['https://a.example/two', null]])
      const events = await other.query<{ type: string }>(`select type from events where feature_name = $1 and type like 'feature-link-%' order by id`, [flag])
      expect(events.map((e) => e.type)).toEqual(['feature-link-added', 'feature-link-added'])
    } finally {
      await other.close()
    }
  })

  it("replaces a listed flag's links with the import's, with feature-link-removed and -added; an unchanged list writes no link event", async () => {
    const flag = await newFlag()
    await ok(t, 'POST', linkPath(flag), { url: 'https://old.example/a' })
    await ok(t, 'POST', linkPath(flag), { url: 'https://old.example/b' })
    await ok(t, 'POST', '/api/admin/features-batch/import', importBody('default', [flag], [{ feature: flag, links: [{ url: 'new.example/c', title: 'C' }] }]))
    expect((await linksOf(flag)).map((l) => [l.url, l.title])).toEqual([['https://new.example/c', 'C']])
    expect((await eventsOf(flag)).slice(2).map((e) => [e.type, e.data, e.pre_data])).toEqual([
      ['feature-link-removed', null, { url: 'https://old.example/a', title: null }],
      ['feature-link-removed', null, { url: 'https://old.example/b', title: null }],
      ['feature-link-added', { url: 'https://new.example/c', title: 'C' }, null],
    ])
    await ok(t, 'POST', '/api/admin/features-batch/import', importBody('default', [flag], [{ feature: flag, links: [{ url: 'https://new.example/c', title: 'C' }] }]))
    expect(await eventsOf(flag)).toHaveLength(5)
  })

  it('refuses an import with a javascript: link or more than 10 links for a flag, writing nothing', async () => {
    const flag = await newFlag()
    await ok(t, 'POST', linkPath(flag), { url: 'https://kept.example' })
    const bad = await t.call('POST', '/api/admin/features-batch/import', { body: importBody('default', [flag], [{ feature: flag, links: [{ url: 'javascript:alert(1)' }] }]) })
    expect(bad.status, bad.text).toBe(400)
    const many = await t.call('POST', '/api/admin/features-batch/import', { body: importBody('default', [flag], [{ feature: flag, links: [...Array(11).keys()].map((n) => ({ url: `https://many.example/${n}` })) }]) })
    expect(many.status, many.text).toBe(400)
    expect((await linksOf(flag)).map((l) => l.url)).toEqual(['https://kept.example'])
  })

  it('has validate report what the import would refuse in links: a javascript: URL, a flag listed twice', async () => {
    const flag = await newFlag()
    const validate = async (links: unknown[]) => (await ok(t, 'POST', '/api/admin/features-batch/validate', importBody('default', [flag], links))).body.errors.map((e: any) => e.message)
    expect(await validate([{ feature: flag, links: [{ url: 'javascript:alert(1)' }] }])).toContain('The following flag links are not valid:')
    expect(await validate([{ feature: flag, links: [{ url: 'https://a.example' }] }, { feature: flag, links: [{ url: 'https://b.example' }] }])).toContain('The links of the following flags are listed twice:')
    expect(await validate([{ feature: flag, links: [{ url: 'https://a.example' }] }])).toEqual([])
    const bad = await t.call('POST', '/api/admin/features-batch/import', { body: importBody('default', [flag], [{ feature: flag, links: [{ url: 'javascript:alert(1)' }] }]) })
    expect(bad.status).toBe(400)
    expect(JSON.stringify(bad.body)).toContain('flag links are not valid')
  })
})

describe('the instance state', () => {
  it('carries links in its export (featureLinks) and restores them into a fresh instance, in order, within the feature-import event', async () => {
    const flag = await newFlag()
    await ok(t, 'POST', linkPath(flag), { url: 'https://state.example/1', title: 'First' })
    await ok(t, 'POST', linkPath(flag), { url: 'https://state.example/2' })
    const doc = (await ok(t, 'GET', '/api/admin/state/export')).body
    expect(doc.featureLinks.filter((l: any) => l.featureName === flag)).toEqual([
      { featureName: flag, url: 'https://state.example/1', title: 'First' },
      { featureName: flag, url: 'https://state.example/2', title: null },
    ])
    const other = await createTestApp()
    try {
      const res = await other.call('POST', '/api/admin/state/import', { body: doc })
      expect(res.status, res.text).toBe(202)
      const links = (await other.call('GET', `/api/admin/projects/default/features/${flag}`)).body.links
      expect(links.map((l: any) => [l.url, l.title])).toEqual([['https://state.example/1', 'First'], ['https://state.example/2', null]])
      const [imported] = await other.query<{ data: any }>(`select data from events where type = 'feature-import' and feature_name = $1`, [flag])
      expect(imported!.data.links).toEqual([{ url: 'https://state.example/1', title: 'First' }, { url: 'https://state.example/2', title: null }])
      // Imported again unchanged: the flag is left as it is.
      const again = await other.call('POST', '/api/admin/state/import', { body: doc })
      expect(again.status, again.text).toBe(202)
      expect((await other.call('GET', `/api/admin/projects/default/features/${flag}`)).body.links.map((l: any) => l.url)).toEqual(['https://state.example/1', 'https://state.example/2'])
    } finally {
      await other.close()
    }
  })

  it('refuses a document with a javascript: link or more than 10 links for a flag, writing nothing', async () => {
    const flag = await newFlag()
    const base = { version: 4, features: [{ name: flag, project: 'default' }] }
    const bad = await t.call('POST', '/api/admin/state/import?keep=false', { body: { ...base, featureLinks: [{ featureName: flag, url: 'javascript:alert(1)', title: null }] } })
    expect(bad.status, bad.text).toBe(400)
    expect(bad.text).toContain('only http and https links are allowed')
    const many = await t.call('POST', '/api/admin/state/import?keep=false', { body: { ...base, featureLinks: [...Array(11).keys()].map((n) => ({ featureName: flag, url: `https://many.example/${n}`, title: null })) } })
    expect(many.status, many.text).toBe(400)
    expect(await linksOf(flag)).toEqual([])
  })
})
