import { prepareConstraint, type ContextTest, type PreparedConstraint } from './constraints.js'
import { fieldGetter } from './context-fields.js'
import { normalizedStrategyValue } from './hashing.js'
import { remoteAddressMatcher } from './ip-ranges.js'
import type { EvaluateOptions, EvaluationContext, SegmentDefinition, StrategyDefinition, VariantDefinition } from './types.js'
import { prepareVariants, type PreparedVariants } from './variants.js'

export interface PreparedSegment {
  readonly definition: SegmentDefinition
  readonly constraints: readonly PreparedConstraint[]
}

export function prepareSegment(definition: SegmentDefinition): PreparedSegment {
  return { definition, constraints: (definition.constraints ?? []).map(prepareConstraint) }
}

/** Whether the strategy's own rule holds (constraints and segments aside). */
type Activation = (context: EvaluationContext, now: number, options: EvaluateOptions) => boolean

export interface PreparedStrategy {
  readonly definition: StrategyDefinition
  /** Custom strategies and applicationHostname depend on what only the SDK's host knows. */
  readonly needsHost: boolean
  readonly custom: boolean
  readonly constraints: readonly PreparedConstraint[]
  /** One entry per segment id; undefined where the segment does not exist. */
  readonly segments: readonly (PreparedSegment | undefined)[]
  /** The strategy's constraints, then its segments' constraints: all must hold. */
  readonly checks: readonly ContextTest[]
  /** A segment the strategy names does not exist: the strategy is off. */
  readonly segmentMissing: boolean
  readonly activate: Activation
  readonly variants: PreparedVariants | null
  readonly usesTime: boolean
  /** The playground's detail shows the definition's parameters and variants: frozen once, on first use (see detailed.ts). */
  shown: { readonly parameters: Record<string, string>; readonly variants: VariantDefinition[] } | undefined
}

const nonEmpty = (value: string | undefined): string | undefined => (value ? value : undefined)
const randomBucket = (options: EvaluateOptions) => Math.floor((options.random ?? Math.random)() * 100) + 1
const list = (text: string | undefined) => (text ?? '').split(',').map((v) => v.trim()).filter((v) => v !== '')

/** Percentages as the SDKs read them: Number(), so '' is 0 and garbage never matches. */
const percentage = (text: string | undefined) => (text === undefined ? NaN : Number(text))

function rollout(percent: number, groupId: string, idOf: (context: EvaluationContext, now: number) => string | undefined, randomWithoutId: boolean): Activation {
  if (!(percent > 0)) return () => false
  return (context, now, options) => {
    const id = idOf(context, now)
    if (id === undefined) return randomWithoutId && randomBucket(options) <= percent
    // Hashing reads every character of `groupId:id`: a 10,000-character groupId makes it the costliest step.
    options.regexMeter?.charge(groupId.length + id.length + 1)
    return normalizedStrategyValue(id, groupId) <= percent
  }
}

function activation(name: string, parameter: (key: string) => string | undefined, flagName: string): Activation {
  switch (name) {
    case 'default':
      return () => true
    case 'userWithId': {
      const ids = new Set(list(parameter('userIds')))
      return (context, _now, options) => {
        const id = nonEmpty(context.userId)
        if (id !== undefined) options.regexMeter?.charge(id.length)
        return id !== undefined && ids.has(id)
      }
    }
    case 'gradualRolloutUserId':
      return rollout(percentage(parameter('percentage')), parameter('groupId') ?? '', (c) => nonEmpty(c.userId), false)
    case 'gradualRolloutSessionId':
      return rollout(percentage(parameter('percentage')), parameter('groupId') ?? '', (c) => nonEmpty(c.sessionId), false)
    case 'gradualRolloutRandom': {
      const percent = percentage(parameter('percentage'))
      return percent > 0 ? (_context, _now, options) => randomBucket(options) <= percent : () => false
    }
    case 'flexibleRollout': {
      const percent = percentage(parameter('rollout'))
      const groupId = parameter('groupId') || flagName
      const stickiness = parameter('stickiness') || 'default'
      if (stickiness === 'default') return rollout(percent, groupId, (c) => nonEmpty(c.userId) ?? nonEmpty(c.sessionId), true)
      if (stickiness === 'random') return rollout(percent, groupId, () => undefined, true)
      // A custom stickiness field that is missing turns the strategy off.
      return rollout(percent, groupId, fieldGetter(stickiness), false)
    }
    case 'remoteAddress': {
      const ips = parameter('IPs')
      const matches = remoteAddressMatcher(ips)
      const entries = ips ? ips.split(',').length : 0
      return (context, _now, options) => {
        const address = typeof context.remoteAddress === 'string' ? context.remoteAddress : undefined
        if (address !== undefined) options.regexMeter?.charge(address.length + entries)
        return matches(address)
      }
    }
    case 'applicationHostname': {
      const hosts = new Set(list(parameter('hostNames')?.toLowerCase()))
      return (_context, _now, options) => options.hostname !== undefined && (options.regexMeter?.charge(options.hostname.length), true) && hosts.has(options.hostname.toLowerCase())
    }
    default:
      return () => false
  }
}

const BUILT_IN = new Set(['default', 'userWithId', 'gradualRolloutUserId', 'gradualRolloutSessionId', 'gradualRolloutRandom', 'flexibleRollout', 'remoteAddress', 'applicationHostname'])

export function prepareStrategy(definition: StrategyDefinition, flagName: string, segments: ReadonlyMap<number, PreparedSegment>): PreparedStrategy {
  const parameters = definition.parameters ?? {}
  // Client payloads are JSON: a rollout may arrive as a number.
  const parameter = (key: string) => {
    const value: unknown = parameters[key]
    return value === undefined || value === null ? undefined : String(value)
  }
  const constraints = (definition.constraints ?? []).map(prepareConstraint)
  const used = (definition.segments ?? []).map((id) => segments.get(id))
  const all = [...constraints, ...used.flatMap((s) => s?.constraints ?? [])]
  const custom = !BUILT_IN.has(definition.name)
  return {
    definition,
    needsHost: custom || definition.name === 'applicationHostname',
    custom,
    constraints,
    segments: used,
    checks: all.map((c) => c.test),
    segmentMissing: used.includes(undefined),
    activate: activation(definition.name, parameter, flagName),
    // Strategy variants hash on the strategy's groupId and default to its stickiness.
    variants: prepareVariants(definition.variants, parameter('groupId') || flagName, parameter('stickiness') || 'default'),
    usesTime: all.some((c) => c.usesTime),
    shown: undefined,
  }
}
