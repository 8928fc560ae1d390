import { describe, expect, it } from 'vitest'
import { applyClientFeaturesDelta, fromClientFeatures, isEnabled, prepareRuleset, type ClientFeaturesPayload } from '../../src/evaluation/index.js'

describe('fromClientFeatures', () => {
  it('turns the client API payload into the engine input, filling what the wire leaves out', () => {
    const payload = {
      version: 2,
      features: [
        {
          name: 'a',
          enabled: true,
          type: 'release',
          description: null,
          strategies: [
            {
              id: 'x1',
              name: 'flexibleRollout',
              parameters: { rollout: 100, stickiness: 'default', groupId: null },
              constraints: [{ contextName: 'userId', operator: 'NUM_GT', value: 5 }],
              segments: null,
              variants: [{ name: 'v', weight: 1000, payload: { type: 'json', value: '{}' } }],
            },
          ],
          variants: null,
          dependencies: [{ feature: 'b' }],
        },
        { name: 'b', enabled: false },
      ],
      segments: [{ id: 3, name: null, constraints: [{ contextName: 'country', operator: 'IN', values: ['NO'], inverted: null }] }],
    } as unknown as ClientFeaturesPayload
    expect(fromClientFeatures(payload)).toStrictEqual({
      flags: [
        {
          name: 'a',
          enabled: true,
          strategies: [
            {
              id: 'x1',
              name: 'flexibleRollout',
              disabled: false,
              parameters: { rollout: '100', stickiness: 'default' },
              constraints: [{ contextName: 'userId', operator: 'NUM_GT', values: [], value: '5', caseInsensitive: false, inverted: false }],
              segments: [],
              variants: [{ name: 'v', weight: 1000, payload: { type: 'json', value: '{}' } }],
            },
          ],
          variants: [],
          dependencies: [{ feature: 'b', enabled: true, variants: [] }],
        },
        { name: 'b', enabled: false, strategies: [], variants: [], dependencies: [] },
      ],
      segments: [{ id: 3, constraints: [{ contextName: 'country', operator: 'IN', values: ['NO'], caseInsensitive: false, inverted: false }] }],
    })
  })
})

describe('applyClientFeaturesDelta', () => {
  const feature = (name: string, segments: number[] = []) => ({ name, enabled: true, strategies: [{ name: 'default', segments }] })
  const segment = (id: number, value: string) => ({ id, constraints: [{ contextName: 'appName', operator: 'IN', values: [value] }] })

  it('hydrates, then updates and removes features and segments in order', () => {
    const state = applyClientFeaturesDelta(undefined, {
      events: [
        { eventId: 1, type: 'hydration', features: [feature('a'), feature('b', [1])], segments: [segment(1, 'web')] },
        { eventId: 2, type: 'feature-removed', featureName: 'a', project: 'default' },
        { eventId: 3, type: 'segment-updated', segment: segment(1, 'ios') },
        { eventId: 4, type: 'feature-updated', feature: feature('c', [2]) },
        { eventId: 5, type: 'segment-updated', segment: segment(2, 'ios') },
        { eventId: 6, type: 'segment-removed', segmentId: 2 },
      ],
    })
    const ruleset = prepareRuleset(state)
    expect([...ruleset.flags.keys()]).toStrictEqual(['b', 'c'])
    expect(isEnabled(ruleset.flags.get('b'), { appName: 'ios' })).toBe(true)
    expect(isEnabled(ruleset.flags.get('b'), { appName: 'web' })).toBe(false)
    expect(isEnabled(ruleset.flags.get('c'), { appName: 'ios' })).toBe(false)
  })

  it('applies to a base state without changing it, and a later hydration replaces everything', () => {
    const base = fromClientFeatures({ features: [feature('a')] })
    const next = applyClientFeaturesDelta(base, { events: [{ eventId: 7, type: 'feature-updated', feature: feature('b') }] })
    expect(base.flags.map((f) => f.name)).toStrictEqual(['a'])
    expect(next.flags.map((f) => f.name)).toStrictEqual(['a', 'b'])
    const rehydrated = applyClientFeaturesDelta(next, { events: [{ eventId: 8, type: 'hydration', features: [feature('z')] }] })
    expect(rehydrated.flags.map((f) => f.name)).toStrictEqual(['z'])
  })
})
