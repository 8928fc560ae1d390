// The clients of `npm run bench:streaming` (bench/streaming.ts starts this in a process of its own): BENCH_STREAMS
// streams of GET /api/client/streaming through the EventSource the Node SDK uses (launchdarkly-eventsource), each
// noting when every `unleash-updated` arrived. Tells its parent when all are connected, and, for each round, when
// every client has had that round's update (with the times).
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { EventSource } = require('launchdarkly-eventsource') as { EventSource: new (url: string, init: Record<string, unknown>) => EventSourceLike }

interface EventSourceLike {
  addEventListener(event: string, listener: (event: { data: string }) => void): void
  close(): void
}

const url = process.env.BENCH_URL!
const token = process.env.BENCH_TOKEN!
const streams = Number(process.env.BENCH_STREAMS ?? 1000)
/** Wall-clock time in milliseconds with sub-millisecond precision, comparable across processes. */
const now = () => performance.timeOrigin + performance.now()

const received: number[][] = Array.from({ length: streams }, () => [])
const sources: EventSourceLike[] = []
let connected = 0
let reported = 0

function checkRound() {
  const round = reported + 1
  if (received.every((times) => times.length >= round)) {
    reported = round
    process.send!({ kind: 'round', round, times: received.map((times) => times[round - 1]) })
    checkRound()
  }
}

function open(i: number) {
  return new Promise<void>((resolve) => {
    const source = new EventSource(`${url}/api/client/streaming`, {
      headers: { authorization: token, 'unleash-client-spec': '5.2.0', 'unleash-appname': 'bench-streaming' },
      initialRetryDelayMillis: 1000,
      errorFilter: () => true,
    })
    source.addEventListener('unleash-connected', () => {
      connected++
      resolve()
    })
    source.addEventListener('unleash-updated', () => {
      received[i]!.push(now())
      checkRound()
    })
    source.addEventListener('error', () => {})
    sources.push(source)
  })
}

// Connected 50 at a time, as a fleet of SDKs starting would, without one burst of a thousand handshakes.
for (let i = 0; i < streams; i += 50) await Promise.all(Array.from({ length: Math.min(50, streams - i) }, (_, j) => open(i + j)))
process.send!({ kind: 'connected', connected })
process.on('message', (message: { kind: string }) => {
  if (message.kind === 'stop') {
    for (const source of sources) source.close()
    process.exit(0)
  }
})
