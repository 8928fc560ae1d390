// Unleash's client specification THROUGH THE ADMIN API: for every specification file, what its state describes is
// created as a user would create it (segments, flags, strategies, variants, dependencies, switches, archive), then
// the official Node SDK (unleash-client) reads /api/client/features from the app over HTTP and must answer every
// `tests` and `variantTests` expectation. One app per file (flag names repeat across files), files run in parallel.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import { serve } from '@hono/node-server'
import { InMemStorageProvider, Unleash } from 'unleash-client'
import { describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { regexConstraintProblem } from '../src/evaluation/index.js'
import { ok } from './helpers/factories.js'

const specDir = dirname(createRequire(import.meta.url).resolve('@unleash/client-specification/specifications/index.json'))
const read = (file: string) => JSON.parse(readFileSync(join(specDir, file), 'utf8'))
const files: string[] = read('index.json')

interface SpecConstraint { contextName: string; operator: string; values?: string[]; value?: string; inverted?: boolean; caseInsensitive?: boolean }
interface SpecVariant { name: string; weight: number; weightType?: string; stickiness?: string; payload?: { type: string; value: string }; overrides?: { contextName: string; values: string[] }[] }
interface SpecStrategy { name: string; parameters?: Record<string, unknown>; constraints?: SpecConstraint[]; segments?: number[]; variants?: SpecVariant[]; disabled?: boolean }
interface SpecFeature { name: string; enabled: boolean; type?: string; strategies?: SpecStrategy[]; variants?: SpecVariant[]; dependencies?: { feature: string; enabled?: boolean; variants?: string[] }[] }
interface SpecSegment { id: number; name?: string; constraints: SpecConstraint[] }
interface Spec {
  name: string
  state: { features?: SpecFeature[]; segments?: SpecSegment[]; events?: { type: string; features?: SpecFeature[]; segments?: SpecSegment[]; feature?: SpecFeature; featureName?: string; segment?: SpecSegment; segmentId?: number }[] }
  tests?: { description: string; context: Record<string, unknown>; toggleName: string; expectedResult: boolean }[]
  variantTests?: { description: string; context: Record<string, unknown>; toggleName: string; expectedResult: Record<string, unknown> }[]
}

/**
 * Why a flag of a spec cannot be created through the admin API, or undefined when it can. Each is refused here as in
 * Unleash 8.2, or kept as a refusal that protects a user (docs/ARCHITECTURE.md, "Checks against Unleash 8.2"); the test
 * checks the route answers 400 for it, and the engine's own run of the specification
 * (test/evaluation/client-specification.test.ts) holds its expectations.
 */
const KNOWN_OPERATORS = new Set(['IN', 'NOT_IN', 'STR_ENDS_WITH', 'STR_STARTS_WITH', 'STR_CONTAINS', 'NUM_EQ', 'NUM_GT', 'NUM_GTE', 'NUM_LT', 'NUM_LTE', 'DATE_AFTER', 'DATE_BEFORE', 'SEMVER_EQ', 'SEMVER_GT', 'SEMVER_LT', 'SEMVER_GTE', 'SEMVER_LTE', 'REGEX', 'IN_CIDR'])

/** Why the admin API refuses `f`, if it does; `segmentIdsOfSpec`: the segments its file defines (files run concurrently). */
function uncreatable(f: SpecFeature, all: SpecFeature[], segmentIdsOfSpec: ReadonlySet<number>): string | undefined {
  if (encodeURIComponent(f.name) !== f.name) return 'name'
  for (const s of f.strategies ?? []) {
    for (const c of s.constraints ?? []) {
      if (!KNOWN_OPERATORS.has(c.operator)) return 'operator'
      // A REGEX that does not compile as RE2 and IN_CIDR entries that are no address are accepted, as Unleash 8.2
      // accepts them; only a pattern over the program limit is refused (none in the specification).
      if (c.operator === 'REGEX' && regexConstraintProblem(c.value ?? '') !== undefined) return 'regex'
    }
  }
  // Unleash allows one level of dependencies: a parent that has a parent itself (a chain or a cycle) is refused.
  const deps = f.dependencies ?? []
  if (deps.some((d) => !all.some((p) => p.name === d.feature))) return 'parent'
  if (deps.some((d) => (all.find((p) => p.name === d.feature)?.dependencies ?? []).length > 0)) return 'dependency'
  if (deps.length > 0 && all.some((c) => (c.dependencies ?? []).some((d) => d.feature === f.name))) return 'dependency'
  // A strategy on a segment that does not exist: Unleash refuses it (the SDKs treat it as off).
  if ((f.strategies ?? []).some((s) => (s.segments ?? []).some((id) => !segmentIdsOfSpec.has(id)))) return 'segment'
  return undefined
}
/** What the specification holds that is refused, by file: the flags and why. A new refusal fails here. */
const REFUSED: Record<string, Record<string, string>> = {
  // Unleash 8.2 refuses these too: an operator that does not exist, a segment that does not exist, a name that is not
  // URL-friendly (encodeURIComponent changes it), a parent that does not exist, a chain of dependencies.
  '13-constraint-operators.json': { 'F7.invalid-operator': 'operator' },
  '15-global-constraints.json': { 'F9.withMissingSegment': 'segment' },
  '17-dependent-features.json': {
    'child.with.cycle': 'dependency',
    'parent.with.cycle': 'dependency',
    'child.with.transitive.dependency': 'dependency',
    'parent.enabled.child.enabled': 'dependency',
    'parents.not.exist.child.enabled': 'parent',
  },
  '18-utf8-flag-names.json': { 'Feature.UTF-8.Hellø_Wørld': 'name', 'Feature.UTF-8.😊_φriend_你好_🌍': 'name' },
}
/** The flags whose variant weights do not add up to 1000, by file. */
const REWEIGHTED: Record<string, string[]> = {
  '08-variants.json': ['Feature.Variants.B', 'Feature.Variants.C', 'Feature.Variants.D', 'Feature.Variants.override.D'],
  '12-custom-stickiness.json': ['Feature.flexible.rollout.custom.stickiness_100'],
  '15-global-constraints.json': ['F9.globalSegmentOn'],
  '16-strategy-variants.json': ['Feature.strategy.multiple.variants', 'Feature.strategy.numeric.variants', 'Feature.strategy.variants.stickiness'],
}

/** The state a spec describes: a delta spec's events folded in order (removed flags kept aside, to be archived). */
function finalState(spec: Spec) {
  if (!spec.state.events) return { features: spec.state.features ?? [], segments: spec.state.segments ?? [], removed: [] as SpecFeature[] }
  const features = new Map<string, SpecFeature>()
  const segments = new Map<number, SpecSegment>()
  const removed = new Map<string, SpecFeature>()
  for (const e of spec.state.events) {
    if (e.type === 'hydration') {
      for (const f of e.features ?? []) features.set(f.name, f)
      for (const s of e.segments ?? []) segments.set(s.id, s)
    } else if (e.type === 'feature-updated' && e.feature) {
      features.set(e.feature.name, e.feature)
      removed.delete(e.feature.name)
    } else if (e.type === 'feature-removed' && e.featureName) {
      const gone = features.get(e.featureName)
      features.delete(e.featureName)
      if (gone) removed.set(gone.name, gone)
    } else if (e.type === 'segment-updated' && e.segment) segments.set(e.segment.id, e.segment)
    else if (e.type === 'segment-removed' && e.segmentId !== undefined) segments.delete(e.segmentId)
    else throw new Error(`unknown delta event ${e.type}`)
  }
  return { features: [...features.values()], segments: [...segments.values()], removed: [...removed.values()] }
}

const constraintBody = (c: SpecConstraint) => ({
  contextName: c.contextName,
  operator: c.operator,
  inverted: c.inverted ?? false,
  caseInsensitive: c.caseInsensitive ?? false,
  ...(c.values !== undefined ? { values: c.values } : {}),
  ...(c.value !== undefined ? { value: c.value } : {}),
})

/** Feature variants as the spec lists them; weights kept exactly (all `fix` when they add up to 1000, as a user would pin them). */
function variantsBody(variants: SpecVariant[]) {
  const pinned = variants.reduce((sum, v) => sum + v.weight, 0) === 1000
  return variants.map((v) => ({
    name: v.name,
    weight: v.weight,
    weightType: pinned ? 'fix' : (v.weightType ?? 'variable'),
    stickiness: v.stickiness ?? 'default',
    ...(v.payload ? { payload: v.payload } : {}),
    ...(v.overrides ? { overrides: v.overrides } : {}),
  }))
}

const ENV = 'development'
const F = '/api/admin/projects/default/features'

/**
 * Creates what the spec describes; answers the flags refused (by name: why), each refusal checked to be a 400, and
 * those whose variant weights do not add up to 1000: Unleash computes variable weights to 1000 (and refuses fixed ones
 * that do not add up), as Flagpost does, so their variant draws cannot be what the spec's hand-written weights give.
 */
async function createState(t: TestApp, spec: Spec): Promise<{ refused: Record<string, string>; reweighted: Set<string> }> {
  const { features, segments, removed } = finalState(spec)
  const segmentIdsOfSpec = new Set(segments.map((s) => s.id))
  const segmentIds = new Map<number, number>()
  for (const s of segments) {
    const created = await ok(t, 'POST', '/api/admin/segments', { name: s.name ?? `segment-${s.id}`, constraints: s.constraints.map(constraintBody) })
    segmentIds.set(s.id, created.body.id)
  }
  const all = [...features, ...removed]
  const refused: Record<string, string> = {}
  const reweighted = new Set<string>()
  const expectRefused = async (f: SpecFeature, why: string, method: string, path: string, body: unknown) => {
    const res = await t.call(method, path, { body })
    expect([f.name, why, res.status, res.body?.name]).toEqual([f.name, why, 400, 'ValidationError'])
    refused[f.name] = why
  }
  const created: SpecFeature[] = []
  for (const f of all) {
    const why = uncreatable(f, all, segmentIdsOfSpec)
    const body = { name: f.name, ...(f.type ? { type: f.type } : {}) }
    if (why === 'name') await expectRefused(f, why, 'POST', F, body)
    else {
      await ok(t, 'POST', F, body)
      created.push(f)
    }
  }
  for (const f of created) {
    const base = `${F}/${encodeURIComponent(f.name)}/environments/${ENV}`
    for (const s of f.strategies ?? []) {
      const parameters = Object.fromEntries(Object.entries(s.parameters ?? {}).map(([k, v]) => [k, String(v)]))
      const body = {
        name: s.name,
        parameters,
        constraints: (s.constraints ?? []).map(constraintBody),
        segments: (s.segments ?? []).map((id) => segmentIds.get(id) ?? 2147483647),
        ...(s.disabled !== undefined ? { disabled: s.disabled } : {}),
        // Unleash asks every strategy variant for its stickiness: a user gives the strategy's.
        ...(s.variants
          ? { variants: s.variants.map((v) => ({ name: v.name, weight: v.weight, weightType: v.weightType ?? 'variable', stickiness: v.stickiness ?? String(s.parameters?.stickiness ?? 'default'), ...(v.payload ? { payload: v.payload } : {}) })) }
          : {}),
      }
      const why = uncreatable({ ...f, strategies: [s], dependencies: [] }, all, segmentIdsOfSpec)
      if (why) await expectRefused(f, why, 'POST', `${base}/strategies`, body)
      else await ok(t, 'POST', `${base}/strategies`, body)
    }
    if (f.variants && f.variants.length > 0) await ok(t, 'PUT', `${base}/variants`, variantsBody(f.variants))
    // A single variant is drawn whatever its weight.
    const weights = [f.variants ?? [], ...(f.strategies ?? []).map((s) => s.variants ?? [])].filter((vs) => vs.length > 1)
    const drawn = (spec.variantTests ?? []).some((x) => x.toggleName === f.name)
    if (drawn && weights.some((vs) => vs.reduce((sum, v) => sum + v.weight, 0) !== 1000)) reweighted.add(f.name)
  }
  for (const f of created) {
    for (const d of f.dependencies ?? []) {
      const body = { feature: d.feature, enabled: d.enabled ?? true, ...(d.variants ? { variants: d.variants } : {}) }
      const path = `${F}/${encodeURIComponent(f.name)}/dependencies`
      const why = uncreatable({ ...f, strategies: [] }, all, segmentIdsOfSpec)
      if (why === 'parent') await expectRefused(f, why, 'POST', path, body)
      else if (why === 'dependency' && !(f.name in refused)) {
        // The first link of a chain or cycle is made; the one that closes it is refused.
        const res = await t.call('POST', path, { body })
        if (res.status === 400) {
          // The chain is not the spec's: neither this flag nor those depending on it, nor its parents that have parents.
          refused[f.name] = 'dependency'
          for (const c of all) if ((c.dependencies ?? []).some((x) => x.feature === f.name)) refused[c.name] = 'dependency'
          for (const p of all) if ((f.dependencies ?? []).some((x) => x.feature === p.name) && (p.dependencies ?? []).length > 0) refused[p.name] = 'dependency'
        }
        else expect(res.status, res.text).toBe(200)
      } else await ok(t, 'POST', path, body)
    }
  }
  for (const f of created) if (f.enabled) await ok(t, 'POST', `${F}/${encodeURIComponent(f.name)}/environments/${ENV}/on`)
  for (const f of removed) await ok(t, 'DELETE', `${F}/${encodeURIComponent(f.name)}`)
  return { refused, reweighted }
}

describe.concurrent.each(files)('client specification %s through the admin API and the Node SDK', (file) => {
  const spec: Spec = read(file)

  it('every expectation holds', { timeout: 60_000 }, async () => {
    const t = await createTestApp()
    const server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' })
    let sdk: Unleash | undefined
    try {
      await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())))
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const { refused, reweighted } = await createState(t, spec)
      expect(refused, file).toEqual(REFUSED[file] ?? {})
      expect([...reweighted].sort(), file).toEqual(REWEIGHTED[file] ?? [])
      const token = (await ok(t, 'POST', '/api/admin/api-tokens', { tokenName: 'spec-sdk', type: 'client', environment: ENV, projects: ['*'] })).body.secret as string
      sdk = new Unleash({ url: `${url}/api/`, appName: 'client-specification', instanceId: file, customHeaders: { Authorization: token }, disableMetrics: true, refreshInterval: 600_000, storageProvider: new InMemStorageProvider() })
      sdk.on('error', () => {})
      await new Promise((resolve) => sdk!.once('synchronized', resolve))
      let checked = 0
      for (const test of spec.tests ?? []) {
        if (test.toggleName in refused) continue
        expect(sdk.isEnabled(test.toggleName, test.context as never), `${file}: ${test.description}`).toBe(test.expectedResult)
        checked++
      }
      for (const test of spec.variantTests ?? []) {
        if (test.toggleName in refused || reweighted.has(test.toggleName)) continue
        const { featureEnabled: _camel, ...variant } = sdk.getVariant(test.toggleName, test.context as never) as unknown as Record<string, unknown>
        expect(JSON.parse(JSON.stringify(variant)), `${file}: ${test.description}`).toEqual(test.expectedResult)
        checked++
      }
      const all = (spec.tests?.length ?? 0) + (spec.variantTests?.length ?? 0)
      const left = [...(spec.tests ?? []).filter((x) => x.toggleName in refused), ...(spec.variantTests ?? []).filter((x) => x.toggleName in refused || reweighted.has(x.toggleName))].length
      expect(checked, file).toBe(all - left)
    } finally {
      sdk?.destroy()
      await new Promise((resolve) => server.close(resolve))
      await t.close()
    }
  })
})
