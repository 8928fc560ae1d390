// The comparison table, on the console and in its section of bench/RESULTS.md.
import { readFile, writeFile } from 'node:fs/promises'

export interface Measurement {
  requests: number
  p50: number
  p99: number
  bytes: number
  /** Responses other than the expected status, errors and timeouts, e.g. "500×3"; empty when none. */
  unexpected: string
}

export interface Row {
  name: string
  /** A write: held to WRITE_MARGIN, so that a noisy run never takes it under the 3× target. */
  write?: boolean
  flagpost?: Measurement
  unleash?: Measurement
  /** The same request to a bare Hono route (the SDK rows): the physical limit on this machine. */
  bare?: Measurement
}

/** Writes are held to this ratio: a busy disk took a 3.4× write row to 2.1×. */
export const WRITE_MARGIN = 4
/** The SDK 304 poll is held to this share of the bare route's requests/s. */
export const BARE_SHARE_TARGET = 0.5

/** Flagpost's requests/s as a share of the bare route's, for the rows measured against it. */
export function bareShare(row: Row): number | undefined {
  return row.flagpost && row.bare && row.bare.requests > 0 ? row.flagpost.requests / row.bare.requests : undefined
}

/** Whether a write row keeps the margin (undefined for reads). */
export function keepsWriteMargin(row: Row): boolean | undefined {
  const r = ratio(row)
  return row.write && r !== undefined ? r >= WRITE_MARGIN : undefined
}

const number = (n: number) => Math.round(n).toLocaleString('en')
const kib = (bytes: number) => (bytes >= 10_240 ? Math.round(bytes / 1024).toString() : (bytes / 1024).toFixed(1))
const ms = (n: number) => (n >= 10 ? Math.round(n).toString() : n.toFixed(1).replace(/\.0$/, ''))

export function ratio(row: Row): number | undefined {
  return row.flagpost && row.unleash && row.unleash.requests > 0 ? row.flagpost.requests / row.unleash.requests : undefined
}

/** Meets the target: at least 3× the requests/s of Unleash and a lower p99. */
export function meetsTarget(row: Row): boolean | undefined {
  const r = ratio(row)
  if (r === undefined) return undefined
  return r >= 3 && row.flagpost!.p99 < row.unleash!.p99
}

export function table(rows: Row[]): string {
  const cell = (m: Measurement | undefined, pick: (m: Measurement) => string) => (m ? pick(m) + (m.unexpected ? ` (${m.unexpected})` : '') : 'n/a')
  const lines = rows.map((row) => {
    const r = ratio(row)
    const target = meetsTarget(row)
    const size = (m: Measurement | undefined) => (m ? kib(m.bytes) : 'n/a')
    const share = bareShare(row)
    const margin = keepsWriteMargin(row) === false ? ` (under ${WRITE_MARGIN}×)` : ''
    const limit = row.bare ? `${cell(row.bare, (m) => number(m.requests))}: ${share === undefined ? 'n/a' : `${Math.round(share * 100)} %`}` : ''
    return `| ${row.name} | ${cell(row.flagpost, (m) => number(m.requests))} | ${row.flagpost ? ms(row.flagpost.p99) : 'n/a'} | ${cell(row.unleash, (m) => number(m.requests))} | ${row.unleash ? ms(row.unleash.p99) : 'n/a'} | ${r === undefined ? 'n/a' : `${r.toFixed(1)}×`}${target === false ? ' ✗' : ''}${margin} | ${size(row.flagpost)} / ${size(row.unleash)} | ${limit} |`
  })
  return [
    '| operation | Flagpost req/s | Flagpost p99 (ms) | Unleash req/s | Unleash p99 (ms) | ratio | KiB per response (F / U) | bare Hono route req/s: Flagpost’s share |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...lines,
  ].join('\n')
}

const START = '<!-- bench:compare:start (written by npm run bench:compare) -->'
const END = '<!-- bench:compare:end -->'

/** Replaces the generated part of the "Side by side with Unleash" section, creating the section if needed. */
export async function writeResults(path: string, generated: string) {
  const current = await readFile(path, 'utf8')
  const block = `${START}\n${generated.trim()}\n${END}`
  const start = current.indexOf(START)
  const end = current.indexOf(END)
  const next =
    start >= 0 && end > start
      ? current.slice(0, start) + block + current.slice(end + END.length)
      : `${current.trimEnd()}\n\n## Side by side with Unleash (\`npm run bench:compare\`)\n\n${block}\n`
  await writeFile(path, next)
}
