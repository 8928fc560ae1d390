import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createProject } from './helpers/factories.js'

/**
 * A project's flag naming pattern is RE2 syntax run by the linear-time matcher (as REGEX constraints),
 * not JavaScript's backtracking RegExp: with that, `(a+)+$` against a name of 40 a's and a dash held
 * the event loop for hours (doubling with every character).
 */
let t: TestApp

beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

/** A fresh project, and how to set its naming pattern, create flags in it and read what is stored of it. */
async function named() {
  const id = await createProject(t, { name: 'Named' })
  return {
    id,
    setNaming: (featureNaming: { pattern: string | null; example?: string | null; description?: string | null }) => t.call('PUT', `/api/admin/projects/${id}`, { body: { name: 'Named', featureNaming } }),
    createFlag: (name: string) => t.call('POST', `/api/admin/projects/${id}/features`, { body: { name } }),
    stored: async () => (await t.query('select feature_naming_pattern, feature_naming_example, updated_at from projects where id = $1', [id]))[0],
  }
}

describe('flag naming patterns', () => {
  it.each([
    ['a backreference', '^(team)-\\1$'],
    ['a lookahead', '(?=team-)[a-z-]+'],
    ['a lookbehind', '[a-z-]+(?<!-)'],
    ['a named backreference', '(?<t>team)-\\k<t>'],
  ])('refuses %s (JavaScript accepts it, RE2 does not) with 400 ValidationError, and changes nothing', async (_, pattern) => {
    const { id, setNaming, stored } = await named()
    const before = await stored()
    const res = await setNaming({ pattern })
    expect(res.status, res.text).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError', message: expect.stringContaining('RE2') })
    expect(await stored()).toEqual(before)
    expect(await t.query("select id from events where type = 'project-updated' and project = $1", [id])).toEqual([])
  })

  it('accepts RE2 syntax JavaScript lacks, and matches names with it in full', async () => {
    const { setNaming, createFlag } = await named()
    expect((await setNaming({ pattern: '(?i)team-[a-z]+', example: 'TEAM-search' })).status).toBe(200)
    expect((await createFlag('Team-Search')).status).toBe(201)
    expect((await createFlag('team-search-2')).status).toBe(400)
    // A quote running to the end of the pattern cannot swallow the anchoring of the whole name.
    expect((await setNaming({ pattern: '\\Qteam.', example: 'team.' })).status).toBe(200)
    expect((await createFlag('team.')).status).toBe(201)
    expect((await createFlag('team.)$')).status).toBe(400)
    expect((await setNaming({ pattern: null })).status).toBe(200)
  })

  it('answers (a+)+$ against 40 a\'s and a dash with 400 in linear time, for the example and for a flag name', async () => {
    const { id, setNaming, createFlag } = await named()
    // Only the linear-time engine accepts (?i): on a backtracking engine this stops here instead of hanging below.
    expect((await setNaming({ pattern: '(?i)(a+)+$' })).status).toBe(200)
    const name = 'a'.repeat(40) + '-'
    const example = await setNaming({ pattern: '(a+)+$', example: name })
    expect(example.status, example.text).toBe(400)
    expect(example.body.message).toContain(`example ${name} does not match the pattern (a+)+$`)
    expect((await setNaming({ pattern: '(a+)+$', example: 'aaaa' })).status).toBe(200)
    const res = await createFlag(name)
    expect(res.status, res.text).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError', message: expect.stringContaining(`The flag name ${name} does not match the naming pattern (a+)+$ of project ${id}`) })
    expect((await createFlag('a'.repeat(40))).status).toBe(201)
  })
})
