import type {
  ConstraintDefinition,
  DependencyDefinition,
  FlagDefinition,
  RulesetDefinition,
  SegmentDefinition,
  StrategyDefinition,
  VariantDefinition,
} from './types.js'

/*
 * Unleash's client API format (`GET /api/client/features`, and its delta stream) into the engine's
 * input. The payload is JSON from the wire, so every optional part may be absent or null.
 */

export interface ClientConstraint {
  contextName: string
  operator: string
  values?: string[] | null
  value?: string | null
  caseInsensitive?: boolean | null
  inverted?: boolean | null
}

export interface ClientVariant {
  name: string
  weight?: number | null
  weightType?: string | null
  stickiness?: string | null
  payload?: { type: string; value: string } | null
  overrides?: { contextName: string; values?: string[] | null }[] | null
}

export interface ClientStrategy {
  id?: string | null
  name: string
  title?: string | null
  disabled?: boolean | null
  sortOrder?: number | null
  parameters?: Record<string, unknown> | null
  constraints?: ClientConstraint[] | null
  segments?: number[] | null
  variants?: ClientVariant[] | null
}

export interface ClientFeature {
  name: string
  enabled: boolean
  type?: string | null
  description?: string | null
  project?: string | null
  stale?: boolean | null
  impressionData?: boolean | null
  strategies?: ClientStrategy[] | null
  variants?: ClientVariant[] | null
  dependencies?: { feature: string; enabled?: boolean | null; variants?: string[] | null }[] | null
}

export interface ClientSegment {
  id: number
  name?: string | null
  constraints?: ClientConstraint[] | null
}

export interface ClientFeaturesPayload {
  version?: number
  features: ClientFeature[]
  segments?: ClientSegment[] | null
}

export type ClientFeaturesDeltaEvent =
  | { eventId: number; type: 'hydration'; features: ClientFeature[]; segments?: ClientSegment[] | null }
  | { eventId: number; type: 'feature-updated'; feature: ClientFeature }
  | { eventId: number; type: 'feature-removed'; featureName: string; project?: string }
  | { eventId: number; type: 'segment-updated'; segment: ClientSegment }
  | { eventId: number; type: 'segment-removed'; segmentId: number }

export interface ClientFeaturesDelta {
  events: ClientFeaturesDeltaEvent[]
}

function constraint(c: ClientConstraint): ConstraintDefinition {
  return {
    contextName: c.contextName,
    operator: c.operator,
    values: c.values ?? [],
    ...(c.value !== undefined && c.value !== null ? { value: String(c.value) } : {}),
    caseInsensitive: c.caseInsensitive === true,
    inverted: c.inverted === true,
  }
}

function variant(v: ClientVariant): VariantDefinition {
  return {
    name: v.name,
    weight: typeof v.weight === 'number' ? v.weight : 0,
    ...(v.weightType ? { weightType: v.weightType } : {}),
    ...(v.stickiness ? { stickiness: v.stickiness } : {}),
    ...(v.payload ? { payload: { type: v.payload.type, value: v.payload.value } } : {}),
    ...(v.overrides?.length ? { overrides: v.overrides.map((o) => ({ contextName: o.contextName, values: o.values ?? [] })) } : {}),
  }
}

function strategy(s: ClientStrategy): StrategyDefinition {
  const parameters: Record<string, string> = {}
  for (const [key, value] of Object.entries(s.parameters ?? {})) if (value !== undefined && value !== null) parameters[key] = String(value)
  return {
    ...(s.id ? { id: s.id } : {}),
    name: s.name,
    ...(s.title ? { title: s.title } : {}),
    disabled: s.disabled === true,
    parameters,
    constraints: (s.constraints ?? []).map(constraint),
    segments: s.segments ?? [],
    variants: (s.variants ?? []).map(variant),
  }
}

function dependency(d: NonNullable<ClientFeature['dependencies']>[number]): DependencyDefinition {
  return { feature: d.feature, enabled: d.enabled !== false, variants: d.variants ?? [] }
}

export function flagFromClientFeature(f: ClientFeature): FlagDefinition {
  return {
    name: f.name,
    enabled: f.enabled === true,
    strategies: (f.strategies ?? []).map(strategy),
    variants: (f.variants ?? []).map(variant),
    dependencies: (f.dependencies ?? []).map(dependency),
  }
}

export function segmentFromClientSegment(s: ClientSegment): SegmentDefinition {
  return { id: s.id, ...(s.name ? { name: s.name } : {}), constraints: (s.constraints ?? []).map(constraint) }
}

/** The engine input for a `GET /api/client/features` payload. */
export function fromClientFeatures(payload: ClientFeaturesPayload): RulesetDefinition {
  return {
    flags: (payload.features ?? []).map(flagFromClientFeature),
    segments: (payload.segments ?? []).map(segmentFromClientSegment),
  }
}

/**
 * Applies delta events (`hydration` replaces everything, then features and segments are updated or
 * removed one by one) to `base`, returning a new engine input; `base` is left as it was.
 */
export function applyClientFeaturesDelta(base: RulesetDefinition | undefined, delta: ClientFeaturesDelta): RulesetDefinition {
  const flags = new Map((base?.flags ?? []).map((f) => [f.name, f]))
  const segments = new Map((base?.segments ?? []).map((s) => [s.id, s]))
  for (const event of delta.events) {
    switch (event.type) {
      case 'hydration':
        flags.clear()
        segments.clear()
        for (const f of event.features) flags.set(f.name, flagFromClientFeature(f))
        for (const s of event.segments ?? []) segments.set(s.id, segmentFromClientSegment(s))
        break
      case 'feature-updated':
        flags.set(event.feature.name, flagFromClientFeature(event.feature))
        break
      case 'feature-removed':
        flags.delete(event.featureName)
        break
      case 'segment-updated':
        segments.set(event.segment.id, segmentFromClientSegment(event.segment))
        break
      case 'segment-removed':
        segments.delete(event.segmentId)
        break
    }
  }
  return { flags: [...flags.values()], segments: [...segments.values()] }
}
