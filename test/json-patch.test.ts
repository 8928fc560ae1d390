import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, ok } from './helpers/factories.js'

/* RFC 6902 as the flag and variant PATCH routes apply it (src/flags/json-patch.ts), through the variants route. */

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

async function flagWithVariants(names: string[]) {
  const path = `/api/admin/projects/default/features/${(await createFlag(t)).name}/environments/development/variants`
  await ok(t, 'PATCH', path, names.map((name) => ({ op: 'add', path: '/-', value: { name } })))
  return path
}
const namesAt = async (path: string) => (await ok(t, 'GET', path)).body.variants.map((v: { name: string }) => v.name)

describe('JSON Patch on a flag environment\'s variants', () => {
  it('adds at an index and at the end, removes, replaces, moves, copies and tests', async () => {
    const path = await flagWithVariants(['a', 'b'])
    await ok(t, 'PATCH', path, [
      { op: 'add', path: '/1', value: { name: 'x' } },
      { op: 'test', path: '/0/name', value: 'a' },
      { op: 'replace', path: '/2/name', value: 'c' },
      { op: 'move', from: '/0', path: '/-' },
      { op: 'copy', from: '/0', path: '/0' },
      { op: 'replace', path: '/0/name', value: 'y' },
      { op: 'remove', path: '/1' },
    ])
    expect((await namesAt(path)).sort()).toEqual(['a', 'c', 'y'])
  })

  it('refuses, whole and with a 400 naming the operation, what cannot apply', async () => {
    const path = await flagWithVariants(['a', 'b'])
    const refused = [
      [{ op: 'replace', path: '/0/name', value: 'z' }, { op: 'test', path: '/0/name', value: 'a' }],
      [{ op: 'remove', path: '/5' }],
      [{ op: 'add', path: '/3', value: { name: 'z' } }],
      [{ op: 'replace', path: '/01/name', value: 'z' }],
      [{ op: 'remove', path: '/0/nothing' }],
      [{ op: 'add', path: 'no-slash', value: {} }],
      [{ op: 'add', path: '/0/__proto__', value: { polluted: true } }],
      [{ op: 'move', from: '/0', path: '/0/payload' }],
      [{ op: 'remove', path: '' }],
    ]
    for (const patch of refused) {
      const res = await t.call('PATCH', path, { body: patch })
      expect(res.status, JSON.stringify(patch)).toBe(400)
      expect(res.body).toMatchObject({ name: 'ValidationError' })
      expect(res.body.message).toMatch(/^The patch cannot be applied \(operation \d\)/)
    }
    expect(await namesAt(path)).toEqual(['a', 'b'])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})
