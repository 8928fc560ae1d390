import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject, ok, ensureTagType } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
let viewer: TestUser
beforeAll(async () => {
  t = await createTestApp()
  // Flags here are tagged with the tag type `team`, which (as in Unleash) must exist first.
  await ensureTagType(t, 'team')
  viewer = await createSignedInUser(t, 'vera', 'Viewer')
  // Read only: an archived flag.
  await createFlag(t, { name: 'gone' })
  expect((await t.call('DELETE', '/api/admin/projects/default/features/gone')).status).toBe(202)
})
afterAll(() => t.close())

const tagsPath = (flag: string) => `/api/admin/features/${flag}/tags`
const addTag = (flag: string, body: unknown) => t.call('POST', tagsPath(flag), { body })
/** A new flag given these tags one by one (each with its feature-tagged). */
async function flagTagged(tags: { type?: string; value: string }[] = [], project = 'default') {
  const { name } = await createFlag(t, {}, project)
  for (const tag of tags) await ok(t, 'POST', tagsPath(name), tag)
  return name as string
}
const payments = { type: 'team', value: 'payments' }
const eventsOf = (name: string) => t.query<{ type: string; project: string; data: any; pre_data: any; tags: any }>('select * from events where feature_name = $1 order by id', [name])
const snapshot = () =>
  t.query(`select
    (select json_agg(x order by x.feature_name, x.tag_type, x.tag_value) from feature_tags x) as tags,
    (select count(*) from events) as events`)

describe('adding tags', () => {
  it('adds a tag with 201, the tag in the body, and feature-tagged carrying the tags', async () => {
    const tagged = await flagTagged()
    const res = await addTag(tagged, { type: 'team', value: 'payments' })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toEqual({ type: 'team', value: 'payments' })
    const event = (await eventsOf(tagged)).at(-1)!
    expect(event).toMatchObject({ type: 'feature-tagged', project: 'default', data: { type: 'team', value: 'payments' }, pre_data: null })
    expect(event.tags).toEqual([{ type: 'team', value: 'payments' }])
  })

  it('defaults the type to simple and trims value and type', async () => {
    const tagged = await flagTagged([payments])
    expect((await addTag(tagged, { value: '  beta  ' })).body).toEqual({ type: 'simple', value: 'beta' })
    expect((await addTag(tagged, { type: ' team ', value: ' search ' })).body).toEqual({ type: 'team', value: 'search' })
    const read = await t.call('GET', `/api/admin/projects/default/features/${tagged}`)
    expect(read.body.tags).toEqual([
      { type: 'simple', value: 'beta' },
      { type: 'team', value: 'payments' },
      { type: 'team', value: 'search' },
    ])
  })

  it('answers 201 again for a tag the flag already has, without an event', async () => {
    const tagged = await flagTagged([payments])
    const before = await snapshot()
    const res = await addTag(tagged, { type: 'team', value: 'payments' })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({ type: 'team', value: 'payments' })
    expect(await snapshot()).toEqual(before)
  })

  it('tags a flag of any project, found by its name alone', async () => {
    const other = await createProject(t)
    const elsewhere = await flagTagged([], other)
    expect((await addTag(elsewhere, { value: 'moved' })).status).toBe(201)
    expect((await eventsOf(elsewhere)).at(-1)).toMatchObject({ type: 'feature-tagged', project: other })
  })

  it.each([
    ['a one-character value', { value: 'x' }, /value/],
    ['a value that is one character after trimming', { value: '  x  ' }, /value/],
    ['a value over 50 characters', { value: 'x'.repeat(51) }, /value/],
    ['a one-character type', { type: 't', value: 'fine' }, /type/],
    ['a type over 50 characters', { type: 't'.repeat(51), value: 'fine' }, /type/],
    ['no value', { type: 'team' }, /value/],
    ['a value that is not a string', { value: 42 }, /value/],
  ])('answers 400 for %s and writes nothing', async (_, body, message) => {
    const tagged = await flagTagged([payments])
    const before = await snapshot()
    const res = await addTag(tagged, body)
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(res.body.message).toMatch(message)
    expect(await snapshot()).toEqual(before)
  })

  it('answers 404 for an unknown or archived flag and writes nothing', async () => {
    const before = await snapshot()
    for (const flag of ['nope', 'gone']) {
      const res = await addTag(flag, { value: 'ghost' })
      expect(res.status, flag).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
    expect(await snapshot()).toEqual(before)
  })

  it('answers 415 for a body that is not JSON', async () => {
    const tagged = await flagTagged()
    expect((await t.call('POST', tagsPath(tagged), { body: 'value=x', headers: { 'content-type': 'text/plain' } })).status).toBe(415)
  })

  it('records exactly one feature-tagged for 20 concurrent additions of one tag', async () => {
    const tagged = await flagTagged([payments])
    const results = await Promise.all(Array.from({ length: 20 }, () => addTag(tagged, { value: 'contended' })))
    expect(results.every((r) => r.status === 201)).toBe(true)
    expect((await eventsOf(tagged)).filter((e) => e.type === 'feature-tagged' && e.data.value === 'contended')).toHaveLength(1)
  })
})

describe('listing tags', () => {
  it('lists the tags of a flag with version 1, by type then value', async () => {
    // Added in another order than listed.
    const tagged = await flagTagged([payments, { value: 'beta' }, { type: 'team', value: 'search' }, { value: 'contended' }])
    const res = await t.call('GET', tagsPath(tagged))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      version: 1,
      tags: [
        { type: 'simple', value: 'beta' },
        { type: 'simple', value: 'contended' },
        { type: 'team', value: 'payments' },
        { type: 'team', value: 'search' },
      ],
    })
  })

  it('answers 404 for an unknown or archived flag', async () => {
    expect((await t.call('GET', tagsPath('nope'))).status).toBe(404)
    expect((await t.call('GET', tagsPath('gone'))).status).toBe(404)
  })
})

describe('removing tags', () => {
  it('removes a tag with 200 and feature-untagged, whose tags still include the removed one', async () => {
    const tagged = await flagTagged([payments, { value: 'beta' }, { type: 'team', value: 'search' }])
    const res = await t.call('DELETE', `${tagsPath(tagged)}/team/search`)
    expect(res.status, res.text).toBe(200)
    expect((await t.call('GET', tagsPath(tagged))).body.tags).not.toContainEqual({ type: 'team', value: 'search' })
    const event = (await eventsOf(tagged)).at(-1)!
    expect(event).toMatchObject({ type: 'feature-untagged', project: 'default', data: null, pre_data: { type: 'team', value: 'search' } })
    expect(event.tags).toContainEqual({ type: 'team', value: 'search' })
  })

  it('decodes percent-encoded type and value', async () => {
    const tagged = await flagTagged([payments])
    await ensureTagType(t, 'owner')
    expect((await addTag(tagged, { type: 'owner', value: 'a b/c' })).status).toBe(201)
    expect((await t.call('DELETE', `${tagsPath(tagged)}/owner/${encodeURIComponent('a b/c')}`)).status).toBe(200)
    expect((await eventsOf(tagged)).at(-1)).toMatchObject({ type: 'feature-untagged', pre_data: { type: 'owner', value: 'a b/c' } })
  })

  it('answers 404 for a tag the flag does not have, an unknown flag or an archived one, and writes nothing', async () => {
    const tagged = await flagTagged([payments])
    const before = await snapshot()
    for (const path of [`${tagsPath(tagged)}/team/search`, `${tagsPath(tagged)}/nope/payments`, `${tagsPath('nope')}/team/payments`, `${tagsPath('gone')}/simple/x`]) {
      const res = await t.call('DELETE', path)
      expect(res.status, path).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
    expect(await snapshot()).toEqual(before)
  })
})

describe('tag permissions', () => {
  it('refuses a Viewer with 403 NoAccessError for UPDATE_FEATURE in the flag\'s project, and changes nothing', async () => {
    const other = await createProject(t)
    const elsewhere = await flagTagged([{ value: 'moved' }], other)
    const before = await snapshot()
    for (const [method, path, body] of [
      ['POST', tagsPath(elsewhere), { value: 'viewer' }],
      ['DELETE', `${tagsPath(elsewhere)}/simple/moved`, undefined],
    ] as const) {
      const res = await viewer.call(method, path, { body })
      expect(res.status, method).toBe(403)
      expect(res.body).toMatchObject({ name: 'NoAccessError', message: expect.stringContaining(`permission=UPDATE_FEATURE in project=${other}`) })
    }
    expect(await snapshot()).toEqual(before)
    expect((await viewer.call('GET', tagsPath(elsewhere))).status).toBe(200)
  })

  it('answers 401 without a token', async () => {
    const tagged = await flagTagged([payments])
    expect((await t.call('GET', tagsPath(tagged), { token: null })).status).toBe(401)
    expect((await t.call('POST', tagsPath(tagged), { token: null, body: { value: 'anon' } })).status).toBe(401)
  })
})

describe('events of changes to a tagged flag', () => {
  it('carry the flag’s tags: switching, patching, variants, strategies', async () => {
    expect((await t.call('POST', '/api/admin/projects/default/features', { body: { name: 'carried' } })).status).toBe(201)
    for (const tag of [{ type: 'team', value: 'aa' }, { type: 'simple', value: 'bb' }]) {
      const res = await addTag('carried', tag)
      expect(res.status, res.text).toBe(201)
    }
    const flag = '/api/admin/projects/default/features/carried'
    const writes = [
      ['POST', `${flag}/environments/development/on`],
      ['POST', `${flag}/environments/development/off`],
      ['PATCH', flag, [{ op: 'replace', path: '/description', value: 'x' }]],
      ['PATCH', `${flag}/variants`, [{ op: 'add', path: '/-', value: { name: 'v', weightType: 'variable', weight: 0, stickiness: 'default' } }]],
      ['PATCH', `${flag}/environments/production/variants`, [{ op: 'remove', path: '/0' }]],
      ['POST', `${flag}/environments/production/strategies`, { name: 'default' }],
    ] as const
    for (const [method, path, body] of writes) {
      const before = (await eventsOf('carried')).length
      const res = await t.call(method, path, body === undefined ? {} : { body })
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(200)
      const written = (await eventsOf('carried')).slice(before)
      expect(written.length, `${method} ${path}`).toBeGreaterThan(0)
      for (const event of written) expect(event.tags, `${method} ${path}: ${event.type}`).toEqual([{ type: 'simple', value: 'bb' }, { type: 'team', value: 'aa' }])
    }
  })
})
