// Self time per function (with its position) of a .cpuprofile: node bench/scratch/top.mjs <file> [n]
import { readFileSync } from 'node:fs'
const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const dt = new Map()
profile.samples.forEach((s, i) => dt.set(s, (dt.get(s) ?? 0) + (profile.timeDeltas[i] ?? 0)))
const self = new Map()
let all = 0
for (const node of profile.nodes) {
  const t = dt.get(node.id) ?? 0
  all += t
  const f = node.callFrame
  const key = `${f.functionName || '(anon)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}:${f.columnNumber + 1}`
  self.set(key, (self.get(key) ?? 0) + t)
}
console.log(`total ${(all / 1000).toFixed(0)} ms`)
for (const [k, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[3] ?? 30))) console.log(`${(t / 1000).toFixed(1).padStart(8)} ms ${(100 * t / all).toFixed(1).padStart(5)}%  ${k}`)
