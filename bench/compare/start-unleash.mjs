// Started by bench/compare.ts as a child process: Unleash's open-source server (the unleash-server package
// installed in bench/.unleash) with the options the benchmark passes as JSON in BENCH_UNLEASH_OPTIONS.
// It prints the address it listens on; SIGTERM stops it (Unleash's own graceful shutdown).
import { pathToFileURL } from 'node:url'

const modulePath = process.env.BENCH_UNLEASH_MODULE
if (!modulePath) throw new Error('BENCH_UNLEASH_MODULE must name unleash-server/dist/lib/server-impl.js')
const { start } = await import(pathToFileURL(modulePath).href)
const unleash = await start(JSON.parse(process.env.BENCH_UNLEASH_OPTIONS ?? '{}'))
const address = unleash.server.address()
console.log(`Unleash ${unleash.version} is listening on http://127.0.0.1:${address.port}`)
