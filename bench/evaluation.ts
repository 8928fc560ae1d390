/**
 * Engine evaluations per second on one core, for a realistic flag: three strategies with
 * constraints, two of them using segments, strategy and flag variants, over varied contexts.
 *
 *   npm run bench:evaluation
 */
import { evaluate, getVariant, isEnabled, prepareRuleset, type EvaluationContext, type RulesetDefinition } from '../src/evaluation/index.js'

const definition: RulesetDefinition = {
  segments: [
    { id: 1, name: 'nordics', constraints: [{ contextName: 'country', operator: 'IN', values: ['NO', 'SE', 'DK', 'FI', 'IS', 'EE', 'LV', 'LT', 'DE', 'NL'] }] },
    { id: 2, name: 'paying', constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro', 'enterprise'] }, { contextName: 'seats', operator: 'NUM_GTE', value: '5' }] },
    { id: 3, name: 'internal', constraints: [{ contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@acme.io', '@acme.dev'], caseInsensitive: true }] },
  ],
  flags: [
    {
      name: 'checkout-redesign',
      enabled: true,
      strategies: [
        {
          id: 'internal-users',
          name: 'userWithId',
          parameters: { userIds: Array.from({ length: 50 }, (_, i) => `staff-${i}`).join(',') },
          constraints: [{ contextName: 'appName', operator: 'IN', values: ['web', 'ios', 'android'] }],
        },
        {
          id: 'nordic-rollout',
          name: 'flexibleRollout',
          parameters: { rollout: '40', stickiness: 'default', groupId: 'checkout-redesign' },
          constraints: [
            { contextName: 'appName', operator: 'IN', values: ['web', 'ios', 'android'] },
            { contextName: 'appVersion', operator: 'SEMVER_GTE', value: '2.3.0' },
          ],
          segments: [1, 2],
          variants: [
            { name: 'compact', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: '{"layout":"compact"}' } },
            { name: 'wide', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: '{"layout":"wide"}' } },
          ],
        },
        {
          id: 'dogfood',
          name: 'flexibleRollout',
          parameters: { rollout: '100', stickiness: 'userId', groupId: 'checkout-redesign' },
          constraints: [
            { contextName: 'currentTime', operator: 'DATE_AFTER', value: '2024-01-01T00:00:00Z' },
            { contextName: 'environment', operator: 'NOT_IN', values: ['production'] },
          ],
          segments: [3],
        },
      ],
      variants: [
        { name: 'control', weight: 500, weightType: 'variable', stickiness: 'default', overrides: [{ contextName: 'userId', values: ['qa-1', 'qa-2'] }] },
        { name: 'treatment', weight: 300, weightType: 'fix', stickiness: 'default', payload: { type: 'string', value: 'on' } },
        { name: 'holdout', weight: 200, weightType: 'variable', stickiness: 'default' },
      ],
    },
  ],
}

const countries = ['NO', 'SE', 'US', 'DE', 'FR', 'BR']
const plans = ['free', 'pro', 'enterprise']
const contexts: EvaluationContext[] = Array.from({ length: 1024 }, (_, i) => ({
  appName: ['web', 'ios', 'android', 'cli'][i % 4]!,
  environment: i % 3 === 0 ? 'staging' : 'production',
  userId: i % 97 === 0 ? `staff-${i % 50}` : `user-${i * 7919}`,
  sessionId: `session-${i}`,
  properties: {
    country: countries[i % countries.length]!,
    plan: plans[i % plans.length]!,
    seats: String(i % 40),
    appVersion: `2.${i % 6}.${i % 3}`,
    email: i % 2 === 0 ? `dev${i}@ACME.io` : `person${i}@example.com`,
  },
}))

const ruleset = prepareRuleset(definition)
const flag = ruleset.flags.get('checkout-redesign')!
const options = { now: Date.parse('2025-06-01T12:00:00Z') }

function measure(label: string, run: (context: EvaluationContext) => unknown): number {
  const mask = contexts.length - 1
  let sink = 0
  const loop = (n: number) => {
    for (let i = 0; i < n; i++) if (run(contexts[i & mask]!)) sink++
  }
  loop(300_000) // warm up
  let iterations = 0
  const started = performance.now()
  let elapsed = 0
  while (elapsed < 3000) {
    loop(200_000)
    iterations += 200_000
    elapsed = performance.now() - started
  }
  const perSecond = Math.round(iterations / (elapsed / 1000))
  console.log(`${label.padEnd(44)} ${perSecond.toLocaleString('en-US').padStart(12)} /s   ${(1e9 / perSecond).toFixed(0).padStart(5)} ns each   (${((sink / iterations) * 100).toFixed(0)}% on)`)
  return perSecond
}

const onShare = contexts.filter((c) => isEnabled(flag, c, options)).length / contexts.length
console.log(`flag: 3 strategies, 7 constraints, 3 segments, 2 strategy + 3 flag variants; on for ${(onShare * 100).toFixed(0)}% of ${contexts.length} contexts`)
console.log(`node ${process.version}, one core\n`)
measure('isEnabled', (c) => isEnabled(flag, c, options))
measure('getVariant', (c) => getVariant(flag, c, options).enabled)
measure('evaluate (isEnabled + variant)', (c) => evaluate(flag, c, options).enabled)
measure('evaluate, reading the clock each call', (c) => evaluate(flag, c).enabled)
