/** The advanced playground's evaluations alone (no HTTP, no database): 5,000 flags × 3 DATE_AFTER × 3 currentTimes. */
import { prepareEnvironment } from '../../src/playground/evaluate.js'
import { RegexMeter } from '../../src/evaluation/index.js'
import type { PlaygroundFlag } from '../../src/playground/loader.js'
import { loadavg } from 'node:os'

const FLAGS = Number(process.env.FLAGS ?? 5000)
const dateAfter = (i: number) => ({ contextName: 'currentTime', operator: 'DATE_AFTER', inverted: false, caseInsensitive: false, values: [], value: new Date(Date.UTC(2000, 0, 1) + i * 1000).toISOString() })
const flags: PlaygroundFlag[] = Array.from({ length: FLAGS }, (_, n) => ({
  name: `dates5k-${n}`, projectId: 'dates5k', enabled: true, variants: [], dependencies: [],
  strategies: [{ id: crypto.randomUUID(), sortOrder: 1, name: 'default', parameters: {}, constraints: Array.from({ length: 3 }, (_, i) => dateAfter(i)), segments: [], variants: [] }],
})) as unknown as PlaygroundFlag[]
const evaluators = prepareEnvironment(flags, [], 'development', { bytes: 8 * 1024 * 1024 })
const contexts = Array.from({ length: 3 }, (_, i) => ({ appName: 'web', environment: 'development', currentTime: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString() }))
const out: Uint8Array[] = new Array(FLAGS * 3)
const round = () => {
  const now = new Date()
  const meter = new RegexMeter(2_000_000, { memo: true })
  for (let f = 0; f < FLAGS; f++) for (let c = 0; c < 3; c++) out[f * 3 + c] = evaluators[f]!.fragment(contexts[c]!, now, meter)
}
for (let i = 0; i < 5; i++) round()
const cpu: number[] = []
for (let i = 0; i < 30; i++) {
  const before = process.cpuUsage()
  round()
  const u = process.cpuUsage(before)
  cpu.push((u.user + u.system) / 1000)
}
cpu.sort((a, b) => a - b)
console.log(`load ${loadavg()[0]!.toFixed(1)}: ${FLAGS * 3} fragments, CPU ms p50 ${cpu[15]!.toFixed(1)} min ${cpu[0]!.toFixed(1)}`)
