import { evaluate, fromClientFeatures, prepareRuleset, RegexMeter, type EvaluationContext } from '../evaluation/index.js'
import type { Context } from 'hono'
import type { AppEnv } from '../http/context.js'
import { clientPayload } from '../client-api/service.js'
import type { FrontendRuleset, PayloadEntry } from '../client-api/state.js'

export interface FrontendToggle {
  name: string
  enabled: true
  variant: { name: string; enabled: boolean; payload?: { type: string; value: string }; feature_enabled: boolean; featureEnabled: boolean }
  impressionData: boolean
}

/**
 * The engine's prepared form of a payload, made once per payload (so once per revision) and kept with it;
 * from the payload's own features and segments, or the same parsed back from its body (shared cache).
 */
export function rulesetOf(entry: PayloadEntry): FrontendRuleset {
  entry.frontend ??= {
    ruleset: prepareRuleset(fromClientFeatures({ features: entry.features, segments: entry.segments })),
    flags: entry.features.map((f) => ({ name: f.name, impressionData: f.impressionData })),
  }
  return entry.frontend
}

/**
 * The flags enabled for a context, as Unleash's frontend API answers: only enabled flags, each with
 * its variant and impressionData. Evaluated by the same engine, on the same payload server SDKs get
 * for this token's environment and projects.
 */
export async function frontendToggles(c: Context<AppEnv>, scope: { environment: string; projects: '*' | string[] }, context: EvaluationContext, now: Date): Promise<FrontendToggle[]> {
  const entry = await clientPayload(c, { ...scope, inlineSegmentConstraints: false })
  const { ruleset, flags } = rulesetOf(entry)
  // One REGEX budget for the request: past it, RegexWorkExceeded answers 400.
  const options = { now, regexMeter: new RegexMeter(c.get('evaluationLimits').regexWorkBudget) }
  const toggles: FrontendToggle[] = []
  for (const { name, impressionData } of flags) {
    const result = evaluate(ruleset.flags.get(name), context, options)
    if (!result.enabled) continue
    const v = result.variant
    toggles.push({
      name,
      enabled: true,
      variant: { name: v.name, enabled: v.enabled, ...(v.payload ? { payload: { type: v.payload.type, value: v.payload.value } } : {}), feature_enabled: v.feature_enabled, featureEnabled: v.feature_enabled },
      impressionData,
    })
  }
  return toggles
}
