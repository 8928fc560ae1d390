import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  applyClientFeaturesDelta,
  evaluate,
  evaluateDetailed,
  fromClientFeatures,
  getVariant,
  isEnabled,
  prepareRuleset,
  type ClientFeaturesDelta,
  type ClientFeaturesPayload,
  type EvaluationContext,
  type VariantResult,
} from '../../src/evaluation/index.js'

// Every file of Unleash's client specification, run through the engine as the SDKs run it.
const specDir = dirname(createRequire(import.meta.url).resolve('@unleash/client-specification/specifications/index.json'))
const read = (file: string) => JSON.parse(readFileSync(join(specDir, file), 'utf8'))

interface Spec {
  name: string
  state: ClientFeaturesPayload | ClientFeaturesDelta
  tests?: { description: string; context: EvaluationContext; toggleName: string; expectedResult: boolean }[]
  variantTests?: { description: string; context: EvaluationContext; toggleName: string; expectedResult: VariantResult }[]
}

const files: string[] = read('index.json')

describe.each(files)('client specification %s', (file) => {
  const spec: Spec = read(file)
  const definition = 'events' in spec.state ? applyClientFeaturesDelta(undefined, spec.state) : fromClientFeatures(spec.state)
  const ruleset = prepareRuleset(definition)

  it.each(spec.tests ?? [])('isEnabled: $description', ({ context, toggleName, expectedResult }) => {
    const flag = ruleset.flags.get(toggleName)
    expect(isEnabled(flag, context)).toBe(expectedResult)
    expect(evaluate(flag, context).enabled).toBe(expectedResult)
    if (flag) expect(evaluateDetailed(flag, context).enabled).toBe(expectedResult)
  })

  it.each(spec.variantTests ?? [])('getVariant: $description', ({ context, toggleName, expectedResult }) => {
    const flag = ruleset.flags.get(toggleName)
    expect(getVariant(flag, context)).toStrictEqual(expectedResult)
    expect(evaluate(flag, context).variant).toStrictEqual(expectedResult)
    if (flag) expect(evaluateDetailed(flag, context).variant).toStrictEqual(expectedResult)
  })
})

it('runs every file the specification lists', () => {
  expect(files.length).toBeGreaterThanOrEqual(22)
  for (const file of files) expect(read(file).name, file).toBeTruthy()
})
