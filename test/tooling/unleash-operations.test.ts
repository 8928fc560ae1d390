import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'
import unleashOperations from '../fixtures/unleash-8.2-operations.json' with { type: 'json' }

/*
 * Every operation of Unleash 8.2's OpenAPI document (test/fixtures/unleash-8.2-operations.json, written by
 * scripts/unleash-operations.ts) is in Flagpost's document, but those docs/ARCHITECTURE.md lists under "Unleash
 * operations not served" (each as "- `METHOD /path`: why"), the one list of them.
 */

const normalized = (path: string) => path.replace(/\{[^}]*\}/g, '{}')

/** The operations docs/ARCHITECTURE.md says are not served, as "METHOD /path". */
export function documentedExclusions(): Set<string> {
  const text = readFileSync(new URL('../../docs/ARCHITECTURE.md', import.meta.url), 'utf8')
  const start = text.indexOf('\n## Unleash operations not served\n')
  if (start === -1) throw new Error('docs/ARCHITECTURE.md has no section "Unleash operations not served"')
  const section = text.slice(start + 1, text.indexOf('\n## ', start + 1))
  return new Set([...section.matchAll(/^- `(GET|POST|PUT|PATCH|DELETE) (\/[^`\s]*)`/gm)].map((m) => `${m[1]} ${normalized(m[2]!)}`))
}

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

describe("Unleash 8.2's operations", () => {
  it('are all in the OpenAPI document, but those documented as not served', async () => {
    const res = await t.call('GET', '/docs/openapi.json', { token: null })
    expect(res.status).toBe(200)
    const document = res.body as { paths: Record<string, Record<string, unknown>> }
    const served = new Set(Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${normalized(path)}`)))
    const excluded = documentedExclusions()
    const all = unleashOperations.map((o) => `${o.method} ${normalized(o.path)}`)
    expect(all.length).toBeGreaterThan(200)
    expect(all.filter((op) => !served.has(op) && !excluded.has(op))).toEqual([])
    // An exclusion names an operation of Unleash that Flagpost really leaves out.
    expect([...excluded].filter((op) => !all.includes(op) || served.has(op))).toEqual([])
  })
})
