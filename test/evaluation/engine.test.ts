/// <reference path="./murmurhash3js.d.ts" />
import murmurHash3 from 'murmurhash3js'
import { describe, expect, it } from 'vitest'
import {
  DISABLED_VARIANT,
  DISABLED_VARIANT_FEATURE_ON,
  evaluate,
  getVariant,
  isEnabled,
  normalizedStrategyValue,
  normalizedVariantValue,
  prepareFlag,
  prepareRuleset,
  type EvaluateOptions,
  type EvaluationContext,
  type FlagDefinition,
  type StrategyDefinition,
  type VariantDefinition,
} from '../../src/evaluation/index.js'
import type { Constraint, Strategy } from '../../src/strategies/schemas.js'
import type { Variant } from '../../src/variants/schemas.js'

const on = (strategies: StrategyDefinition[], more: Partial<FlagDefinition> = {}) => prepareFlag({ name: 'flag', enabled: true, strategies, ...more })
const fixedRandom = (value: number): EvaluateOptions => ({ random: () => value })

describe('hashing', () => {
  it('buckets "<groupId>:<id>" with murmurhash3 x86 32-bit, seed 0, into 1..100', () => {
    expect(normalizedStrategyValue('122', 'AB12A')).toBe(23)
    expect(normalizedStrategyValue('155', 'AB12A')).toBe(100)
    expect(normalizedStrategyValue('123', 'gr1')).toBe((murmurHash3.x86.hash32('gr1:123', 0) % 100) + 1)
  })

  it('places variants with seed 86028157 modulo the total weight', () => {
    expect(normalizedVariantValue('123', 'flag', 1000)).toBe((murmurHash3.x86.hash32('flag:123', 86028157) % 1000) + 1)
  })
})

describe('strategies', () => {
  type Row = [title: string, strategy: StrategyDefinition, context: EvaluationContext, expected: boolean, options?: EvaluateOptions]
  const bucket = (id: string, group: string) => normalizedStrategyValue(id, group)
  const rows: Row[] = [
    ['default is on', { name: 'default' }, {}, true],
    ['userWithId matches a listed user (list with spaces)', { name: 'userWithId', parameters: { userIds: 'a, b ,c' } }, { userId: 'b' }, true],
    ['userWithId is off without userId', { name: 'userWithId', parameters: { userIds: 'a' } }, {}, false],
    ['userWithId reads only the userId field', { name: 'userWithId', parameters: { userIds: 'a' } }, { properties: { userId: 'a' } }, false],
    ['flexibleRollout at 100% is on for anyone', { name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'default', groupId: 'g' } }, {}, true],
    ['flexibleRollout at 0% is off', { name: 'flexibleRollout', parameters: { rollout: '0', stickiness: 'default', groupId: 'g' } }, { userId: '1' }, false],
    ['flexibleRollout hashes the userId with the groupId', { name: 'flexibleRollout', parameters: { rollout: String(bucket('u1', 'g')), stickiness: 'userId', groupId: 'g' } }, { userId: 'u1' }, true],
    ['flexibleRollout just below the bucket is off', { name: 'flexibleRollout', parameters: { rollout: String(bucket('u1', 'g') - 1), stickiness: 'userId', groupId: 'g' } }, { userId: 'u1' }, false],
    ['flexibleRollout groupId defaults to the flag name', { name: 'flexibleRollout', parameters: { rollout: String(bucket('u1', 'flag')), stickiness: 'userId' } }, { userId: 'u1' }, true],
    ['default stickiness falls back to sessionId', { name: 'flexibleRollout', parameters: { rollout: String(bucket('s1', 'g')), stickiness: 'default', groupId: 'g' } }, { sessionId: 's1' }, true],
    ['default stickiness falls back to random (1..100)', { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: 'g' } }, {}, true, fixedRandom(0.49)],
    ['random above the rollout is off', { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'random', groupId: 'g' } }, { userId: 'x' }, false, fixedRandom(0.5)],
    ['a custom stickiness field is read from properties', { name: 'flexibleRollout', parameters: { rollout: String(bucket('acme', 'g')), stickiness: 'tenant', groupId: 'g' } }, { properties: { tenant: 'acme' } }, true],
    ['a missing custom stickiness field turns the strategy off', { name: 'flexibleRollout', parameters: { rollout: '99', stickiness: 'tenant', groupId: 'g' } }, {}, false, fixedRandom(0)],
    ['a rollout that is not a number is off', { name: 'flexibleRollout', parameters: { rollout: 'lots', stickiness: 'default' } }, { userId: '1' }, false],
    ['gradualRolloutUserId hashes userId', { name: 'gradualRolloutUserId', parameters: { percentage: String(bucket('u9', 'G')), groupId: 'G' } }, { userId: 'u9' }, true],
    ['gradualRolloutSessionId needs a sessionId', { name: 'gradualRolloutSessionId', parameters: { percentage: '100', groupId: 'G' } }, { userId: 'u9' }, false],
    ['gradualRolloutRandom compares 1..100 to the percentage', { name: 'gradualRolloutRandom', parameters: { percentage: '30' } }, {}, true, fixedRandom(0.29)],
    ['gradualRolloutRandom above the percentage is off', { name: 'gradualRolloutRandom', parameters: { percentage: '30' } }, {}, false, fixedRandom(0.3)],
    ['remoteAddress matches a listed IP', { name: 'remoteAddress', parameters: { IPs: '10.0.0.1, 10.0.0.2' } }, { remoteAddress: '10.0.0.2' }, true],
    ['remoteAddress matches an IPv4 CIDR range', { name: 'remoteAddress', parameters: { IPs: '192.168.0.0/16,2001:db8::/32' } }, { remoteAddress: '192.168.7.5' }, true],
    // As the Node SDK: IPv6 entries match only the same text, never as a range.
    ['remoteAddress does not match an IPv6 range', { name: 'remoteAddress', parameters: { IPs: '192.168.0.0/16,2001:db8::/32' } }, { remoteAddress: '2001:db8:1::5' }, false],
    ['remoteAddress matches an IPv6 address written the same', { name: 'remoteAddress', parameters: { IPs: '2001:db8::1' } }, { remoteAddress: '2001:db8::1' }, true],
    ['remoteAddress is off without an address', { name: 'remoteAddress', parameters: { IPs: '10.0.0.1' } }, {}, false],
    ['applicationHostname compares the given host name, ignoring case', { name: 'applicationHostname', parameters: { hostNames: 'Web-1, web-2' } }, {}, true, { hostname: 'WEB-1' }],
    ['applicationHostname is off without a host name', { name: 'applicationHostname', parameters: { hostNames: 'web-1' } }, {}, false],
    ['an unknown strategy is off', { name: 'myCustomStrategy', parameters: {} }, {}, false],
  ]
  it.each(rows)('%s', (_title, strategy, context, expected, options) => {
    expect(isEnabled(on([strategy]), context, options)).toBe(expected)
  })
})

describe('flag state', () => {
  const off = { name: 'userWithId', parameters: { userIds: 'nobody' } }
  const rows: [string, FlagDefinition, boolean][] = [
    ['a disabled environment is off whatever its strategies', { name: 'f', enabled: false, strategies: [{ name: 'default' }] }, false],
    ['no strategies: on when the environment is enabled', { name: 'f', enabled: true, strategies: [] }, true],
    ['no strategies: off when the environment is disabled', { name: 'f', enabled: false }, false],
    ['any strategy that is on turns the flag on', { name: 'f', enabled: true, strategies: [off, { name: 'default' }] }, true],
    ['disabled strategies do not count', { name: 'f', enabled: true, strategies: [off, { name: 'default', disabled: true }] }, false],
    ['only disabled strategies: off (no rule could turn it on; a write leaving it so switches the environment off)', { name: 'f', enabled: true, strategies: [{ ...off, disabled: true }] }, false],
  ]
  it.each(rows)('%s', (_title, definition, expected) => {
    expect(isEnabled(prepareFlag(definition), { userId: 'someone' })).toBe(expected)
  })
  it('an unknown flag (undefined) is off with the disabled variant', () => {
    expect(isEnabled(undefined)).toBe(false)
    expect(getVariant(undefined)).toStrictEqual({ name: 'disabled', enabled: false, feature_enabled: false })
  })
})

describe('variants', () => {
  // Weights as the server stores them: normalized to add up to 1000.
  const variants: VariantDefinition[] = [
    { name: 'red', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'R' } },
    { name: 'green', weight: 300, weightType: 'fix', stickiness: 'default' },
    { name: 'blue', weight: 200, weightType: 'variable', stickiness: 'default', overrides: [{ contextName: 'userId', values: ['vip'] }] },
  ]
  const expectedFor = (seed: string, group = 'flag', list = variants) => {
    const total = list.reduce((s, v) => s + v.weight, 0)
    const target = (murmurHash3.x86.hash32(`${group}:${seed}`, 86028157) % total) + 1
    let counter = 0
    return list.find((v) => (counter += v.weight) >= target)!.name
  }

  it('picks by the hash of the userId over the cumulative weights', () => {
    const flag = on([{ name: 'default' }], { variants })
    for (const userId of ['1', '2', '3', 'alice', 'bob', 'carol', '9999']) {
      expect(getVariant(flag, { userId }).name, userId).toBe(expectedFor(userId))
    }
  })

  it('returns the variant object the specification expects, payload included', () => {
    const flag = on([{ name: 'default' }], { variants: [variants[0]!] })
    expect(getVariant(flag, { userId: '1' })).toStrictEqual({ name: 'red', payload: { type: 'string', value: 'R' }, enabled: true, feature_enabled: true })
    expect(Object.isFrozen(getVariant(flag, { userId: '1' }))).toBe(true)
  })

  it('applies overrides before hashing', () => {
    expect(getVariant(on([{ name: 'default' }], { variants }), { userId: 'vip' }).name).toBe('blue')
  })

  it('default stickiness falls back userId → sessionId → remoteAddress → random', () => {
    const flag = on([{ name: 'default' }], { variants })
    expect(getVariant(flag, { sessionId: 's-1', remoteAddress: '10.0.0.1' }).name).toBe(expectedFor('s-1'))
    expect(getVariant(flag, { remoteAddress: '10.0.0.1' }).name).toBe(expectedFor('10.0.0.1'))
    expect(getVariant(flag, {}, fixedRandom(0)).name).toBe('red')
    expect(getVariant(flag, {}, fixedRandom(0.999)).name).toBe('blue')
  })

  it('uses the first variant\'s custom stickiness', () => {
    const custom = variants.map((v) => ({ ...v, stickiness: 'tenant' }))
    const flag = on([{ name: 'default' }], { variants: custom })
    expect(getVariant(flag, { userId: 'x', properties: { tenant: 'acme' } }).name).toBe(expectedFor('acme', 'flag', custom))
  })

  it('skips weight-0 variants and gives the disabled variant when nothing has weight', () => {
    const flag = on([{ name: 'default' }], { variants: [{ name: 'zero', weight: 0 }, { name: 'all', weight: 1000 }] })
    expect(getVariant(flag, { userId: '1' }).name).toBe('all')
    expect(getVariant(on([{ name: 'default' }], { variants: [{ name: 'zero', weight: 0 }] }), { userId: '1' })).toBe(DISABLED_VARIANT_FEATURE_ON)
  })

  it('off flag: disabled variant with feature_enabled false; on without variants: feature_enabled true', () => {
    expect(getVariant(prepareFlag({ name: 'f', enabled: false, variants }))).toBe(DISABLED_VARIANT)
    expect(getVariant(on([{ name: 'default' }]))).toStrictEqual({ name: 'disabled', enabled: false, feature_enabled: true })
  })

  it('strategy variants of the first strategy that is on win over the flag variants, with its groupId and stickiness', () => {
    const strategyVariants: VariantDefinition[] = [{ name: 'sA', weight: 500, stickiness: 'default' }, { name: 'sB', weight: 500, stickiness: 'default' }]
    const flag = on(
      [
        { name: 'userWithId', parameters: { userIds: 'nobody' }, variants: [{ name: 'never', weight: 1000 }] },
        { name: 'flexibleRollout', parameters: { rollout: '100', groupId: 'grp', stickiness: 'default' }, variants: strategyVariants },
      ],
      { variants },
    )
    for (const userId of ['1', '2', '3', '4']) expect(getVariant(flag, { userId }).name).toBe(expectedFor(userId, 'grp', strategyVariants))
  })

  it('a first strategy that is on without variants means the flag variants, even if a later one has some', () => {
    const flag = on([{ name: 'default' }, { name: 'default', variants: [{ name: 'never', weight: 1000 }] }], { variants })
    expect(getVariant(flag, { userId: '1' }).name).toBe(expectedFor('1'))
  })

  it('evaluate gives isEnabled and getVariant in one pass', () => {
    const flag = on([{ name: 'default' }], { variants })
    expect(evaluate(flag, { userId: '7' })).toStrictEqual({ enabled: true, variant: getVariant(flag, { userId: '7' }) })
  })
})

describe('dependencies', () => {
  const ruleset = prepareRuleset({
    flags: [
      { name: 'parent-on', enabled: true, strategies: [{ name: 'default' }], variants: [{ name: 'v1', weight: 1000 }] },
      { name: 'parent-off', enabled: false, strategies: [{ name: 'default' }] },
      { name: 'parent-for-ann', enabled: true, strategies: [{ name: 'userWithId', parameters: { userIds: 'ann' } }] },
      { name: 'grandparent-child', enabled: true, strategies: [], dependencies: [{ feature: 'parent-on' }] },
      { name: 'c-on', enabled: true, dependencies: [{ feature: 'parent-on' }] },
      { name: 'c-off', enabled: true, dependencies: [{ feature: 'parent-off' }] },
      { name: 'c-expects-off', enabled: true, dependencies: [{ feature: 'parent-off', enabled: false }] },
      { name: 'c-expects-off-but-on', enabled: true, dependencies: [{ feature: 'parent-on', enabled: false }] },
      { name: 'c-variant', enabled: true, dependencies: [{ feature: 'parent-on', variants: ['v1', 'v2'] }] },
      { name: 'c-wrong-variant', enabled: true, dependencies: [{ feature: 'parent-on', variants: ['v2'] }] },
      { name: 'c-missing', enabled: true, dependencies: [{ feature: 'nope' }] },
      { name: 'c-transitive', enabled: true, dependencies: [{ feature: 'grandparent-child' }] },
      { name: 'c-context', enabled: true, dependencies: [{ feature: 'parent-for-ann' }] },
      { name: 'c-disabled-itself', enabled: false, dependencies: [{ feature: 'parent-on' }] },
    ],
  })
  const rows: [string, string, EvaluationContext, boolean][] = [
    ['an enabled parent satisfies', 'c-on', {}, true],
    ['a disabled parent does not', 'c-off', {}, false],
    ['enabled: false wants the parent off', 'c-expects-off', {}, true],
    ['enabled: false with the parent on', 'c-expects-off-but-on', {}, false],
    ['the parent variant is one of the listed', 'c-variant', { userId: '1' }, true],
    ['the parent variant is not listed', 'c-wrong-variant', { userId: '1' }, false],
    ['a parent that does not exist', 'c-missing', {}, false],
    ['a parent that has parents itself (no transitive dependencies)', 'c-transitive', {}, false],
    ['the parent is evaluated with the same context (on)', 'c-context', { userId: 'ann' }, true],
    ['the parent is evaluated with the same context (off)', 'c-context', { userId: 'bob' }, false],
    ['the child must be enabled itself', 'c-disabled-itself', {}, false],
    ['a child whose parent has no parents is fine', 'grandparent-child', {}, true],
  ]
  it.each(rows)('%s', (_title, name, context, expected) => {
    expect(isEnabled(ruleset.flags.get(name), context)).toBe(expected)
  })
  it('prepareFlag without the parents leaves the dependency unsatisfied', () => {
    expect(isEnabled(prepareFlag({ name: 'c', enabled: true, dependencies: [{ feature: 'p' }] }))).toBe(false)
    expect(isEnabled(prepareFlag({ name: 'c', enabled: true, dependencies: [{ feature: 'p' }] }, [], [{ name: 'p', enabled: true }]))).toBe(true)
  })
  it('a parent using currentTime gives the child the clock', () => {
    const rs = prepareRuleset({
      flags: [
        { name: 'p', enabled: true, strategies: [{ name: 'default', constraints: [{ contextName: 'currentTime', operator: 'DATE_AFTER', value: '2030-01-01T00:00:00Z' }] }] },
        { name: 'c', enabled: true, dependencies: [{ feature: 'p' }] },
      ],
    })
    expect(isEnabled(rs.flags.get('c'), {}, { now: Date.parse('2031-01-01T00:00:00Z') })).toBe(true)
    expect(isEnabled(rs.flags.get('c'), {}, { now: Date.parse('2029-01-01T00:00:00Z') })).toBe(false)
  })
})

describe('the server\'s stored shapes', () => {
  it('evaluates stored strategies, constraints and variants as they are', () => {
    const constraint: Constraint = { contextName: 'userId', operator: 'IN', caseInsensitive: false, inverted: false, values: ['1'] }
    const variant: Variant = { name: 'a', weight: 1000, weightType: 'variable', stickiness: 'default' }
    const strategy: Strategy = {
      id: '0b4b4f5e-0000-4000-8000-000000000000', name: 'flexibleRollout', title: null, disabled: false, featureName: 'f', sortOrder: 0,
      segments: [], constraints: [constraint], variants: [variant], parameters: { rollout: '100', stickiness: 'default', groupId: 'f' },
    }
    const flag = prepareFlag({ name: 'f', enabled: true, strategies: [strategy], variants: [] })
    expect(evaluate(flag, { userId: '1' })).toStrictEqual({ enabled: true, variant: { name: 'a', enabled: true, feature_enabled: true } })
    expect(isEnabled(flag, { userId: '2' })).toBe(false)
  })
})
