import type { Context } from 'hono'
import type { Db } from '../db.js'
import { tokenExpiries } from '../api-tokens/store.js'
import type { Clock } from '../core/clock.js'
import type { AppEnv } from '../http/context.js'
import { ApiError, loggable } from '../core/errors.js'
import { bareTag, deltaBody, heldRevisions } from './delta.js'
import { buildOnce } from './in-flight.js'
import { loadPayload } from './load.js'
import { scopeKey, type ClientScope } from './payload.js'
import { NETWORK_ALLOWANCE } from '../http/client-address.js'
import { originOf } from './refresh.js'
import { isNewer, readRevision } from './revision.js'
import { clientPayload } from './service.js'
import type { PayloadEntry, SdkState, StreamHub } from './state.js'

export interface StreamingOptions {
  /** Open streams this process holds at most, in all (past it: 429, and the SDKs poll). */
  maxConnections: number
  /** … per API token (every instance of an application usually shares one). */
  maxPerToken: number
  /** … per client address. */
  maxPerAddress: number
  /** How often each stream gets a `: keep-alive` comment (the Node SDK gives up on a stream silent for 60 s). */
  keepAliveMs: number
  /** How often the revision is read while streams are open, for the writes of other processes sharing the database. */
  pollMs: number
}

export const DEFAULT_STREAMING_OPTIONS: StreamingOptions = { maxConnections: 10_000, maxPerToken: 1_000, maxPerAddress: 500, keepAliveMs: 15_000, pollMs: 1_000 }

/** Frames queued for a client that does not read them; past this it is disconnected, and comes back with its Last-Event-ID. */
const MAX_QUEUED_FRAMES = 64

const encoder = new TextEncoder()
const KEEP_ALIVE = encoder.encode(': keep-alive\n\n')
const CONNECTED = encoder.encode(': connected\n\n')

interface Connection {
  controller: ReadableStreamDefaultController<Uint8Array>
  /** The tag of the payload the client holds (what its Last-Event-ID would say). */
  held: string
  token: string
  /** The API token it was opened with: deleted or expired, the stream ends (the SDK reconnects, and is refused). */
  tokenId: number
  /** The keys it counts under per address: its address's and, for IPv6, its /48's. */
  addresses: string[]
  group: Group
  open: boolean
}

/** The streams of one scope: one payload built per change, one frame per tag held, written to each. */
interface Group {
  scope: ClientScope
  key: string
  origin: string
  connections: Set<Connection>
  /** The payload its streams were last brought to. */
  latest: PayloadEntry
}

const frame = (event: string, entry: PayloadEntry, json: string) => encoder.encode(`event: ${event}\nid: ${bareTag(entry.etag)}\ndata: ${json}\n\n`)

const STREAM_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' }

/**
 * The hub of `GET /api/client/streaming` for one app on Node: every open stream, grouped by scope. A change
 * (a write through this app, at once; any other process's write sharing the database, found by reading the
 * revision every `pollMs` while streams are open) is brought to each scope once: its payload built once, the
 * delta from each tag its clients hold serialized once, and written to every stream.
 */
export function streamHub(options: Partial<StreamingOptions> = {}): (sdk: SdkState) => StreamHub & { stats(): { connections: number; scopes: number } } {
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined))
  return (sdk) => createHub(sdk, { ...DEFAULT_STREAMING_OPTIONS, ...given })
}

function createHub(sdk: SdkState, options: StreamingOptions): StreamHub & { stats(): { connections: number; scopes: number } } {
  const groups = new Map<string, Group>()
  const perToken = new Map<string, number>()
  const perAddress = new Map<string, number>()
  let count = 0
  let db: Db | undefined
  let clock: Clock = () => new Date()
  /** When the tokens of the open streams were last checked, and at which revision. */
  let tokensChecked = { revision: '', at: 0 }
  let timers: ReturnType<typeof setInterval>[] = []
  let running: Promise<void> | undefined
  let again = false
  let closed = false

  const bump = (map: Map<string, number>, key: string, by: number) => {
    const next = (map.get(key) ?? 0) + by
    if (next > 0) map.set(key, next)
    else map.delete(key)
  }

  function drop(connection: Connection) {
    if (!connection.open) return
    connection.open = false
    const group = connection.group
    group.connections.delete(connection)
    if (group.connections.size === 0 && groups.get(group.key) === group) groups.delete(group.key)
    bump(perToken, connection.token, -1)
    for (const key of connection.addresses) bump(perAddress, key, -1)
    count--
    if (count === 0) stopTimers()
  }

  function end(connection: Connection) {
    try {
      connection.controller.close()
    } catch {}
    drop(connection)
  }

  function send(connection: Connection, bytes: Uint8Array) {
    if (!connection.open) return
    // A client that stopped reading: ended, so that it reconnects and catches up from its Last-Event-ID.
    if ((connection.controller.desiredSize ?? 0) < -MAX_QUEUED_FRAMES) return end(connection)
    try {
      connection.controller.enqueue(bytes)
    } catch {
      drop(connection)
    }
  }

  function startTimers() {
    if (timers.length > 0) return
    const keepAlive = setInterval(() => {
      for (const group of groups.values()) for (const connection of group.connections) send(connection, KEEP_ALIVE)
    }, options.keepAliveMs)
    const poll = setInterval(refresh, options.pollMs)
    // They never keep a Node process alive (Workers' timers have no unref).
    for (const timer of [keepAlive, poll]) (timer as { unref?: () => void }).unref?.()
    timers = [keepAlive, poll]
  }

  function stopTimers() {
    for (const timer of timers) clearInterval(timer)
    timers = []
  }

  /** One bringing up to date at a time; asked again while one runs, one more after it. */
  function refresh() {
    if (running) {
      again = true
      return
    }
    running = (async () => {
      do {
        again = false
        await bringUpToDate().catch((error: unknown) => console.error('bringing SDK streams up to date failed:', loggable(error)))
      } while (again && count > 0)
    })().finally(() => (running = undefined))
  }

  async function bringUpToDate() {
    if (!db || count === 0) return
    const generation = sdk.revisions.generation
    const revision = await readRevision(db)
    sdk.revisions.observe(revision, generation)
    await endRevokedStreams(db, revision.key)
    for (const group of [...groups.values()]) {
      let entry = sdk.payloads.get(group.key) ?? group.latest
      if (isNewer(revision, entry.revision)) {
        const from = db
        entry = await buildOnce(sdk.building, `${group.key}@${revision.key}`, sdk.options.shareInFlight, () => loadPayload(sdk, from, group.scope, group.key, revision, group.origin))
      }
      if (entry === group.latest || isNewer(group.latest.revision, entry.revision)) continue
      group.latest = entry
      const tag = bareTag(entry.etag)
      const frames = new Map<string, Uint8Array>()
      for (const connection of group.connections) {
        if (connection.held === tag) continue
        let bytes = frames.get(connection.held)
        if (!bytes) {
          bytes = frame('unleash-updated', entry, deltaBody(entry, connection.held).json)
          frames.set(connection.held, bytes)
        }
        send(connection, bytes)
        sdk.options.observePayload?.('/api/client/streaming', bytes.byteLength)
        connection.held = tag
      }
    }
  }

  /**
   * Ends the streams whose API token was deleted or has expired, before any change is sent: checked when the revision
   * moved (deleting a token or changing its expiry writes an event) and at least every keep-alive interval (a token
   * reaching its expiry writes nothing). The SDK reconnects and is refused like any request with that token.
   */
  async function endRevokedStreams(from: Db, revisionKey: string) {
    const now = clock().getTime()
    if (revisionKey === tokensChecked.revision && now - tokensChecked.at < options.keepAliveMs) return
    tokensChecked = { revision: revisionKey, at: now }
    const connections = [...groups.values()].flatMap((group) => [...group.connections])
    const expiries = await tokenExpiries(from, [...new Set(connections.map((connection) => connection.tokenId))])
    for (const connection of connections) {
      const expiresAt = expiries.get(connection.tokenId)
      if (expiresAt === undefined || (expiresAt !== null && expiresAt.getTime() <= now)) end(connection)
    }
  }

  const tooMany = (what: string) => new ApiError('TooManyRequestsError', `Too many streaming connections ${what}: poll /api/client/features or /api/client/delta instead`)

  return {
    async open(c: Context<AppEnv>, scope: ClientScope, who: { token: string; tokenId: number; address: string | undefined; network?: string | undefined }) {
      // The address's key, and for IPv6 its /48 with NETWORK_ALLOWANCE times the allowance.
      const limits: [string, number][] = [[who.address ?? 'unknown', options.maxPerAddress]]
      if (who.network !== undefined) limits.push([who.network, options.maxPerAddress * NETWORK_ALLOWANCE])
      const addresses = limits.map(([key]) => key)
      if (closed) throw tooMany('(the server is stopping)')
      // HEAD: the headers a stream would have, and no stream (the body is never read, so a stream would stay counted
      // until its keep-alives went unread: a way to fill the per-token and per-address limits without a socket).
      if (c.req.method === 'HEAD') return new Response(null, { status: 200, headers: STREAM_HEADERS })
      if (count >= options.maxConnections) throw tooMany('on this server')
      if ((perToken.get(who.token) ?? 0) >= options.maxPerToken) throw tooMany('for this token')
      if (limits.some(([key, allowance]) => (perAddress.get(key) ?? 0) >= allowance)) throw tooMany('from this address')
      // Counted before the payload is awaited, so that concurrent connections cannot pass the limits together.
      count++
      bump(perToken, who.token, 1)
      for (const key of addresses) bump(perAddress, key, 1)
      let entry: PayloadEntry
      try {
        entry = await clientPayload(c, scope)
        if (closed) throw tooMany('(the server is stopping)')
      } catch (error) {
        count--
        bump(perToken, who.token, -1)
        for (const key of addresses) bump(perAddress, key, -1)
        throw error
      }
      db = c.var.db
      clock = c.var.clock
      const key = scopeKey(scope)
      let group = groups.get(key)
      if (!group) {
        group = { scope, key, origin: originOf(c), connections: new Set(), latest: entry }
        groups.set(key, group)
      }
      // Its streams may already have been brought past what this request read.
      const latest = isNewer(group.latest.revision, entry.revision) ? group.latest : entry
      const [held] = heldRevisions(c.req.header('last-event-id'))
      const tag = bareTag(latest.etag)
      let first = CONNECTED
      if (held !== tag) {
        const body = deltaBody(latest, held)
        first = frame(body.hydration ? 'unleash-connected' : 'unleash-updated', latest, body.json)
        sdk.options.observePayload?.('/api/client/streaming', first.byteLength)
      }
      const connection: Connection = { controller: undefined as never, held: tag, token: who.token, tokenId: who.tokenId, addresses, group, open: true }
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          connection.controller = controller
          controller.enqueue(first)
        },
        cancel: () => drop(connection),
      })
      group.connections.add(connection)
      c.req.raw.signal?.addEventListener('abort', () => drop(connection), { once: true })
      startTimers()
      // This request read a newer payload than the group's other streams hold: they get it now, not at the next poll.
      if (latest !== group.latest) refresh()
      return new Response(stream, { status: 200, headers: STREAM_HEADERS })
    },
    changed() {
      if (count > 0) refresh()
    },
    async close() {
      closed = true
      stopTimers()
      for (const group of [...groups.values()]) for (const connection of [...group.connections]) end(connection)
      while (running) await running
    },
    stats: () => ({ connections: count, scopes: groups.size }),
  }
}
