import { describe, expect, it } from 'vitest'
import type { EvaluationContext } from '../src/evaluation/index.js'
import { prepareEnvironment } from '../src/playground/evaluate.js'
import type { PlaygroundFlag } from '../src/playground/loader.js'

/*
 * The advanced playground shares one evaluation's JSON between contexts with the same signature.
 * These flags use every kind of input the signature must capture; for every context the shared
 * JSON must be exactly the detailed evaluation of that context.
 */

const strategy = (id: number, name: string, rest: Partial<PlaygroundFlag['strategies'][number]> = {}) => ({ id: `s-${id}`, sortOrder: id, name, parameters: {}, constraints: [], segments: [], variants: [], ...rest })
const flag = (name: string, rest: Partial<PlaygroundFlag>): PlaygroundFlag => ({ name, projectId: 'p', enabled: true, strategies: [], variants: [], dependencies: [], ...rest })
const variant = (name: string, weight: number, extra: object = {}) => ({ name, weight, weightType: 'variable' as const, stickiness: 'default', ...extra })

const flags: PlaygroundFlag[] = [
  flag('parent', {
    strategies: [strategy(1, 'flexibleRollout', { parameters: { rollout: '50', stickiness: 'userId', groupId: 'parent' } }), strategy(2, 'customThing', { constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }] })],
    variants: [variant('left', 500), variant('right', 500)],
  }),
  flag('child', {
    strategies: [strategy(1, 'default', { constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }], segments: [1, 99] }), strategy(2, 'userWithId', { parameters: { userIds: 'u1,u3' } })],
    dependencies: [{ feature: 'parent', enabled: true, variants: ['left'] }],
  }),
  flag('variants', {
    strategies: [
      strategy(1, 'flexibleRollout', {
        parameters: { rollout: '70', stickiness: 'userId', groupId: 'g' },
        constraints: [{ contextName: 'currentTime', operator: 'DATE_AFTER', value: '2025-01-01T00:00:00Z' }],
        variants: [variant('a', 300, { stickiness: 'userId' }), variant('b', 700, { stickiness: 'userId', payload: { type: 'string', value: 'B' } })],
      }),
      strategy(2, 'applicationHostname', { parameters: { hostNames: 'h' } }),
      strategy(3, 'default', { disabled: true }),
    ],
    variants: [variant('x', 1000, { overrides: [{ contextName: 'userId', values: ['u2'] }] })],
  }),
  flag('off', { enabled: false, strategies: [strategy(1, 'default')] }),
  // More results than a number holds (60 constraints): shared by the signature's text instead.
  flag('many', {
    strategies: [
      strategy(1, 'default', {
        constraints: Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? { contextName: 'region', operator: 'IN', values: ['eu'] } : { contextName: 'plan', operator: 'NOT_IN', values: ['pro'] })),
      }),
      strategy(2, 'userWithId', { parameters: { userIds: 'u2' } }),
    ],
  }),
  flag('opposite', { strategies: [strategy(1, 'remoteAddress', { parameters: { IPs: '10.0.0.0/8' } })], dependencies: [{ feature: 'parent', enabled: false }] }),
]
const segments = [{ id: 1, name: 'adults', constraints: [{ contextName: 'age', operator: 'NUM_GTE', value: '18' }] }]

const contexts: EvaluationContext[] = []
for (const userId of ['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8'])
  for (const region of ['eu', 'us'])
    for (const plan of ['pro', 'free'])
      for (const currentTime of ['2024-06-01T00:00:00Z', '2026-06-01T00:00:00Z'])
        contexts.push({ appName: 'web', environment: 'production', userId, currentTime, remoteAddress: userId === 'u1' ? '10.1.2.3' : '192.168.0.1', properties: { region, plan, age: userId < 'u4' ? '30' : '12' } })

describe('shared playground evaluations', () => {
  it('give every context exactly its own detailed evaluation', () => {
    const now = new Date('2025-06-01T00:00:00Z')
    const evaluators = prepareEnvironment(flags, segments, 'production')
    const decoder = new TextDecoder()
    let shared = 0
    for (const evaluator of evaluators) {
      const seen = new Set<Uint8Array>()
      for (const context of contexts) {
        const bytes = evaluator.fragment(context, now)
        if (seen.has(bytes)) shared++
        seen.add(bytes)
        const { hasUnsatisfiedDependency: _, ...expected } = evaluator.evaluate(context, now)
        // What follows the context in the response: `,"projectId":…,<the evaluation>}`.
        expect(JSON.parse(`{"context":null${decoder.decode(bytes)}`), `${evaluator.name} ${JSON.stringify(context)}`).toEqual(JSON.parse(JSON.stringify({ context: null, projectId: 'p', ...expected })))
      }
    }
    expect(shared).toBeGreaterThan(contexts.length * 2)
  })

  it('share nothing more once their budget of bytes is spent, and still answer every context', () => {
    const now = new Date('2025-06-01T00:00:00Z')
    const decoder = new TextDecoder()
    /** How many distinct byte arrays the evaluator hands out for the contexts, twice over. */
    const distinct = (budget: { bytes: number }) => {
      const [evaluator] = prepareEnvironment([flags[2]!], segments, 'production', budget)
      const seen = new Set<Uint8Array>()
      for (const context of [...contexts, ...contexts]) {
        const bytes = evaluator!.fragment(context, now)
        seen.add(bytes)
        const { hasUnsatisfiedDependency: _, ...expected } = evaluator!.evaluate(context, now)
        expect(JSON.parse(`{"context":null${decoder.decode(bytes)}`)).toEqual(JSON.parse(JSON.stringify({ context: null, projectId: 'p', ...expected })))
      }
      return seen.size
    }
    const unbounded = distinct({ bytes: Infinity })
    const budget = { bytes: 3000 }
    expect(distinct(budget)).toBeGreaterThan(unbounded)
    expect(budget.bytes).toBeGreaterThanOrEqual(0)
    expect(budget.bytes).toBeLessThan(3000)
  })

  it('never share random outcomes: a random rollout is drawn for each context', () => {
    const [random] = prepareEnvironment([flag('coin', { strategies: [strategy(1, 'flexibleRollout', { parameters: { rollout: '50', stickiness: 'random', groupId: 'coin' } })] })], [], 'production')
    const results = new Set(Array.from({ length: 200 }, () => JSON.parse(`{"context":null${new TextDecoder().decode(random!.fragment({ appName: 'web' }, new Date()))}`).isEnabled))
    expect(results).toEqual(new Set([true, false]))
  })
})
