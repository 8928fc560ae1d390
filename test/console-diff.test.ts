import { describe, expect, it } from 'vitest'
import { diff } from '../console/src/diff.js'

describe("the event log's diff of preData and data", () => {
  it('names what was added, removed and changed, by path, nested objects included', () => {
    expect(diff({ name: 'a', enabled: false, parameters: { rollout: '25', groupId: 'x' }, old: 1 }, { name: 'a', enabled: true, parameters: { rollout: '50', groupId: 'x' }, added: [1] })).toEqual([
      { path: 'added', kind: 'added', after: [1] },
      { path: 'enabled', kind: 'changed', before: false, after: true },
      { path: 'old', kind: 'removed', before: 1 },
      { path: 'parameters.rollout', kind: 'changed', before: '25', after: '50' },
    ])
  })

  it('shows a creation as each field added and a deletion as each field removed', () => {
    expect(diff(undefined, { name: 'f', type: 'release' })).toEqual([
      { path: 'name', kind: 'added', after: 'f' },
      { path: 'type', kind: 'added', after: 'release' },
    ])
    expect(diff({ name: 'f' }, null)).toEqual([{ path: 'name', kind: 'removed', before: 'f' }])
    expect(diff({ strategy: null }, { strategy: { id: 'x' } })).toEqual([{ path: 'strategy', kind: 'added', after: { id: 'x' } }])
    expect(diff({ values: ['a', 'b'] }, { values: ['a', 'b'] })).toEqual([])
  })
})
