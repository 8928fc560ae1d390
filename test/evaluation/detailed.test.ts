import { describe, expect, it } from 'vitest'
import { evaluateDetailed, getVariant, isEnabled, prepareRuleset, type EvaluationContext, type FlagDefinition } from '../../src/evaluation/index.js'

const segments = [
  { id: 1, name: 'nordics', constraints: [{ contextName: 'country', operator: 'IN', values: ['NO', 'SE'] }] },
  { id: 2, name: 'big', constraints: [{ contextName: 'seats', operator: 'NUM_GTE', value: '50' }] },
]

const flags: FlagDefinition[] = [
  {
    name: 'checkout',
    enabled: true,
    strategies: [
      {
        id: 's1',
        name: 'flexibleRollout',
        title: 'Nordic rollout',
        parameters: { rollout: '100', stickiness: 'default', groupId: 'checkout' },
        constraints: [
          { contextName: 'appName', operator: 'IN', values: ['web'] },
          { contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@acme.io'] },
        ],
        segments: [1, 2],
        variants: [{ name: 'blue', weight: 1000, stickiness: 'default' }],
      },
      { id: 's2', name: 'myCustom', parameters: { any: 'thing' } },
      { id: 's3', name: 'applicationHostname', parameters: { hostNames: 'web-1' }, constraints: [{ contextName: 'appName', operator: 'IN', values: ['api'] }] },
      { id: 's4', name: 'default', disabled: true },
    ],
    variants: [{ name: 'flag-variant', weight: 1000 }],
  },
  { name: 'missing-segment', enabled: true, strategies: [{ id: 'm1', name: 'default', segments: [404] }] },
  { name: 'parent-custom', enabled: true, strategies: [{ name: 'myCustom' }] },
  { name: 'child-of-custom', enabled: true, strategies: [], dependencies: [{ feature: 'parent-custom' }] },
  { name: 'child-of-missing', enabled: true, strategies: [], dependencies: [{ feature: 'nope' }] },
  { name: 'off-env', enabled: false, strategies: [{ id: 'o1', name: 'default' }] },
]

const ruleset = prepareRuleset({ flags, segments })
const flag = (name: string) => ruleset.flags.get(name)!
const nordicWeb: EvaluationContext = { appName: 'web', userId: '1', properties: { email: 'a@acme.io', country: 'NO', seats: '80' } }

describe('detailed evaluation', () => {
  it('reports every strategy, constraint and segment with its own result', () => {
    const result = evaluateDetailed(flag('checkout'), { ...nordicWeb, properties: { ...nordicWeb.properties, seats: '10' } })
    expect(result.enabled).toBe(false)
    expect(result.environmentEnabled).toBe(true)
    const [rollout, custom, hostname, disabled] = result.strategies
    expect(rollout).toMatchObject({ id: 's1', name: 'flexibleRollout', title: 'Nordic rollout', disabled: false, result: false })
    expect(rollout!.constraints).toStrictEqual([
      { contextName: 'appName', operator: 'IN', values: ['web'], result: true },
      { contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@acme.io'], result: true },
    ])
    expect(rollout!.segments).toStrictEqual([
      { id: 1, name: 'nordics', found: true, result: true, constraints: [{ contextName: 'country', operator: 'IN', values: ['NO', 'SE'], result: true }] },
      { id: 2, name: 'big', found: true, result: false, constraints: [{ contextName: 'seats', operator: 'NUM_GTE', value: '50', result: false }] },
    ])
    expect(custom).toMatchObject({ id: 's2', result: false })
    expect(hostname).toMatchObject({ id: 's3', result: false })
    expect(disabled).toMatchObject({ id: 's4', disabled: true, result: false })
    expect(result.variant).toStrictEqual({ name: 'disabled', enabled: false, feature_enabled: false })
  })

  it('evaluates every constraint even after one failed (the fast path stops early)', () => {
    const result = evaluateDetailed(flag('checkout'), { appName: 'ios', properties: { email: 'a@acme.io' } })
    expect(result.strategies[0]!.constraints.map((c) => c.result)).toStrictEqual([false, true])
  })

  it('gives the variant of the first strategy that is on', () => {
    const result = evaluateDetailed(flag('checkout'), nordicWeb)
    expect(result.enabled).toBe(true)
    expect(result.strategies[0]!.result).toBe(true)
    expect(result.variant).toStrictEqual({ name: 'blue', enabled: true, feature_enabled: true })
  })

  it('without unknownStrategies, custom strategies are off and applicationHostname uses the given host name', () => {
    const context = { appName: 'api' }
    expect(evaluateDetailed(flag('checkout'), context).strategies.map((s) => s.result)).toStrictEqual([false, false, false, false])
    expect(evaluateDetailed(flag('checkout'), context, { hostname: 'web-1' }).strategies.map((s) => s.result)).toStrictEqual([false, false, true, false])
  })

  it('with unknownStrategies, custom and applicationHostname strategies are unknown unless their constraints fail', () => {
    const api = evaluateDetailed(flag('checkout'), { appName: 'api' }, { unknownStrategies: true, hostname: 'web-1' })
    expect(api.strategies.map((s) => s.result)).toStrictEqual([false, 'unknown', 'unknown', false])
    expect(api.enabled).toBe('unknown')
    expect(api.variant).toStrictEqual({ name: 'disabled', enabled: false, feature_enabled: false })
    const web = evaluateDetailed(flag('checkout'), { appName: 'web' }, { unknownStrategies: true })
    expect(web.strategies.map((s) => s.result)).toStrictEqual([false, 'unknown', false, false])
  })

  it('a strategy that is on wins over unknown ones', () => {
    expect(evaluateDetailed(flag('checkout'), nordicWeb, { unknownStrategies: true }).enabled).toBe(true)
  })

  it('a missing segment is reported and turns the strategy off', () => {
    const result = evaluateDetailed(flag('missing-segment'), {})
    expect(result.strategies[0]!.segments).toStrictEqual([{ id: 404, found: false, result: false, constraints: [] }])
    expect(result.enabled).toBe(false)
  })

  it('reports dependencies; an unknown parent makes the child unknown', () => {
    expect(evaluateDetailed(flag('child-of-custom'), {}).dependencies).toStrictEqual([{ feature: 'parent-custom', enabled: true, variants: [], satisfied: false }])
    const unknown = evaluateDetailed(flag('child-of-custom'), {}, { unknownStrategies: true })
    expect(unknown.dependencies[0]!.satisfied).toBe('unknown')
    expect(unknown.enabled).toBe('unknown')
    expect(evaluateDetailed(flag('child-of-missing'), {}, { unknownStrategies: true }).enabled).toBe(false)
  })

  it('a disabled environment is off, with the strategies still shown', () => {
    const result = evaluateDetailed(flag('off-env'), {})
    expect(result).toMatchObject({ enabled: false, environmentEnabled: false })
    expect(result.strategies[0]!.result).toBe(true)
  })

  it('agrees with the fast path', () => {
    const contexts: EvaluationContext[] = [{}, nordicWeb, { appName: 'api' }, { appName: 'web', properties: { country: 'SE', seats: '50', email: 'x@acme.io' } }]
    for (const f of ruleset.flags.values()) {
      for (const context of contexts) {
        const detailed = evaluateDetailed(f, context)
        expect(detailed.enabled, f.name).toBe(isEnabled(f, context))
        expect(detailed.variant, f.name).toStrictEqual(getVariant(f, context))
      }
    }
  })
})
