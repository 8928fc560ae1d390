// Writes test/fixtures/unleash-8.2-operations.json: every operation (method, path, operationId) of Unleash 8.2's
// OpenAPI document, which test/tooling/unleash-operations.test.ts holds against Flagpost's own document.
// Usage: tsx scripts/unleash-operations.ts <unleash-openapi.json>
import { readFileSync, writeFileSync } from 'node:fs'

const METHODS = ['get', 'post', 'put', 'patch', 'delete']
const source = process.argv[2]
if (!source) throw new Error('usage: tsx scripts/unleash-operations.ts <unleash-openapi.json>')
const document = JSON.parse(readFileSync(source, 'utf8')) as { paths: Record<string, Record<string, { operationId?: string }>> }
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  METHODS.filter((method) => item[method]).map((method) => ({ method: method.toUpperCase(), path, operationId: item[method]!.operationId ?? null })),
)
operations.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.method < b.method ? -1 : 1))
writeFileSync('test/fixtures/unleash-8.2-operations.json', `${JSON.stringify(operations, null, 1)}\n`)
console.log(`${operations.length} operations`)
