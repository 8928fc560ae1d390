// A local Postgres for the Workers build (wrangler dev, workerd tests), Node only: embedded PGlite served over the
// Postgres wire protocol, plus the plain-WebSocket relay that Neon's serverless driver talks to instead of Neon.
//
//   Neon driver --ws--> relay --\
//                                +--> gate (one transaction at a time) --tcp--> pglite-socket --> PGlite
//   pg, psql  --tcp--> gate ----/
//
// The gate exists because PGlite is a single session: pglite-socket interleaves its connections message by
// message, so two clients' extended-protocol batches (Parse/Bind/Execute/Sync) trample each other's unnamed
// statement ("unnamed prepared statement does not exist"). The gate lets one connection at a time through, from
// its first message to the ReadyForQuery that leaves it idle (out of any transaction), like pgbouncer would.
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import type { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { WebSocketServer, type RawData } from 'ws'
import { openPglite, type NodeDbHandle } from '../src/db-node.js'

export interface LocalPostgresOptions {
  /** PGlite data folder on disk; in memory when omitted. */
  dataDir?: string
  /** A `dumpDataDir()` tarball to start from (e.g. a migrated template). */
  loadDataDir?: Blob
  /** Apply `schema/migrations` before serving (idempotent). */
  migrate?: boolean
  /** Host to bind the servers to (default 127.0.0.1: the database accepts any password, keep it local). */
  host?: string
  /** Port of the Postgres server for `databaseUrl` (default 0: a free port). */
  port?: number
  /** Port of the WebSocket relay for `wsProxy` (default 0: a free port). */
  wsPort?: number
  /** Concurrent connections accepted (default 100); they still take turns, one transaction at a time. */
  maxConnections?: number
  /** How long a connection may wait for its turn before it gets an error and is closed (default 10 s). */
  turnTimeoutMs?: number
}

export interface LocalPostgres {
  /** postgres:// URL of the server (any user and password are accepted), for `DATABASE_URL`. */
  databaseUrl: string
  /** What to put in the worker's `NEON_WS_PROXY`: the relay's `host:port/path`, without `ws://`. */
  wsProxy: string
  /** The PGlite database itself (drizzle handle and raw client), for seeding and checking between requests. */
  database: NodeDbHandle & { client: PGlite }
  /** WebSocket connections through the relay: open now, and opened since the start. */
  relayConnections(): { open: number; total: number }
  /** Stops the relay and the servers, then closes PGlite (idempotent). */
  close(): Promise<void>
}

/** Starts PGlite, a Postgres server and a WebSocket relay in front of it; all on free local ports by default. */
export async function startLocalPostgres(options: LocalPostgresOptions = {}): Promise<LocalPostgres> {
  const host = options.host ?? '127.0.0.1'
  const maxConnections = options.maxConnections ?? 100
  const database = await openPglite({ dataDir: options.dataDir, loadDataDir: options.loadDataDir })
  const stops: (() => Promise<void>)[] = []
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop()
    await database.close()
  }
  try {
    if (options.migrate) await database.migrate()

    // pglite-socket only ever sees the gate's connections, on a port of its own.
    const socketServer = new PGLiteSocketServer({ db: database.client, host: '127.0.0.1', port: 0, maxConnections })
    await socketServer.start()
    stops.push(() => socketServer.stop())
    const upstream = { host: '127.0.0.1', port: Number(socketServer.getServerConn().split(':').pop()) }

    const turns = new Turns()
    const gate = await startGate(host, options.port ?? 0, (client) => openSession(client, upstream, turns, options.turnTimeoutMs ?? 10_000))
    stops.push(gate.close)
    const relay = await startRelay(host, options.wsPort ?? 0, (client) => openSession(client, upstream, turns, options.turnTimeoutMs ?? 10_000))
    stops.push(relay.close)

    let closing: Promise<void> | undefined
    return {
      databaseUrl: `postgres://postgres:postgres@${host}:${gate.port}/postgres`,
      // src/db.ts gives the driver `wsProxy` as a function, so it connects to `ws://` + this string as is.
      wsProxy: `${host}:${relay.port}/v1`,
      database,
      relayConnections: () => ({ open: relay.open, total: relay.total }),
      close: () => (closing ??= stopAll()),
    }
  } catch (error) {
    await stopAll()
    throw error
  }
}

/** The client end of a connection, whatever carries it (TCP socket or WebSocket). */
interface ClientEnd {
  send(chunk: Buffer): void
  close(): void
}

/** The gate's view of one connection: what the client sent, and that it went away. */
interface Session {
  receive(chunk: Buffer): void
  closed(): void
}

interface Listener {
  port: number
  close(): Promise<void>
}

/** Plain TCP Postgres server: each connection becomes a session of the gate. */
async function startGate(host: string, port: number, open: (client: ClientEnd) => Session): Promise<Listener> {
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.setNoDelay(true)
    const session = open({ send: (chunk) => socket.write(chunk), close: () => socket.end() })
    socket.on('data', (chunk) => session.receive(chunk))
    socket.on('error', () => socket.destroy())
    socket.on('close', () => {
      sockets.delete(socket)
      session.closed()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

/** WebSocket server whose connections' binary messages are a Postgres byte stream, as Neon's proxy expects. */
async function startRelay(host: string, port: number, open: (client: ClientEnd) => Session): Promise<Listener & { readonly open: number; readonly total: number }> {
  const wss = new WebSocketServer({ host, port, perMessageDeflate: false })
  await new Promise<void>((resolve, reject) => {
    wss.once('listening', resolve)
    wss.once('error', reject)
  })
  let total = 0
  wss.on('connection', (ws) => {
    total++
    const session = open({
      send: (chunk) => {
        if (ws.readyState === ws.OPEN) ws.send(chunk, { binary: true })
      },
      close: () => ws.close(),
    })
    ws.on('message', (data: RawData) => session.receive(Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)))
    ws.on('error', () => ws.terminate())
    ws.on('close', () => session.closed())
  })
  return {
    port: (wss.address() as AddressInfo).port,
    get open() {
      return wss.clients.size
    },
    get total() {
      return total
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate()
        wss.close(() => resolve())
      }),
  }
}

/** Hands PGlite's single session to one connection at a time, in the order they asked. */
class Turns {
  private holder: symbol | undefined
  private readonly waiting: { who: symbol; answer: (granted: boolean) => void }[] = []

  /** Resolves true once `who` holds the session, or false after `timeoutMs` or when it stops waiting. */
  take(who: symbol, timeoutMs: number): Promise<boolean> {
    if (this.holder === undefined || this.holder === who) {
      this.holder = who
      return Promise.resolve(true)
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.drop(who), timeoutMs)
      this.waiting.push({ who, answer: (granted) => (clearTimeout(timer), resolve(granted)) })
    })
  }

  /** Gives the session to the next connection waiting if `who` holds it; otherwise `who` stops waiting. */
  release(who: symbol) {
    if (this.holder !== who) return this.drop(who)
    const next = this.waiting.shift()
    this.holder = next?.who
    next?.answer(true)
  }

  private drop(who: symbol) {
    const index = this.waiting.findIndex((w) => w.who === who)
    if (index >= 0) this.waiting.splice(index, 1)[0]!.answer(false)
  }
}

const SSL_REQUEST_CODE = 80877103
const GSSENC_REQUEST_CODE = 80877104
const CANCEL_REQUEST_CODE = 80877102
const READY_FOR_QUERY = 0x5a // 'Z'
const TERMINATE = 0x58 // 'X'
/** Client messages after which the server answers ReadyForQuery: Sync, Query, FunctionCall. */
const ENDS_BATCH = new Set([0x53, 0x51, 0x46])
/** Client messages that neither start nor end a batch: PasswordMessage (and SASL), CopyData, CopyDone, CopyFail. */
const NEUTRAL = new Set([0x70, 0x64, 0x63, 0x66])

/** One client connection through the gate to its own pglite-socket connection, taking turns on the session. */
function openSession(client: ClientEnd, upstream: { host: string; port: number }, turns: Turns, turnTimeoutMs: number): Session {
  const id = Symbol('connection')
  const server = connect(upstream)
  server.setNoDelay(true)
  let preamble: Buffer | undefined = Buffer.alloc(0) // bytes before the startup message (SSLRequest...)
  let holding = false
  let waiting = false
  let closed = false
  const queued: Buffer[] = []
  let awaitingReady = 0 // batches sent whose ReadyForQuery has not come back yet
  let openBatch = false // messages sent since the last Sync/Query
  let idle = true // the last ReadyForQuery said: not in a transaction
  let terminating = false

  const shutdown = () => {
    if (closed) return
    closed = true
    turns.release(id)
    server.destroy()
    client.close()
  }

  const readClient = messageReader(true, (type) => {
    if (type === 0 || ENDS_BATCH.has(type)) {
      awaitingReady++
      openBatch = false
    } else if (type === TERMINATE) terminating = true
    else if (!NEUTRAL.has(type)) openBatch = true
  })
  const readServer = messageReader(false, (type, status) => {
    if (type !== READY_FOR_QUERY) return
    awaitingReady = Math.max(0, awaitingReady - 1)
    idle = status === 0x49 // 'I'
  })

  const maybeRelease = () => {
    if (holding && awaitingReady === 0 && !openBatch && idle) {
      holding = false
      turns.release(id)
    }
  }

  const forward = (chunk: Buffer) => {
    server.write(chunk)
    // Postgres hangs up after Terminate and clients wait for that (Neon's driver never closes its WebSocket
    // itself: its Socket.write(data, encoding, callback) drops pg's `write(terminate, () => end())` callback).
    if (terminating) server.end()
  }

  const waitForTurn = async () => {
    waiting = true
    const granted = await turns.take(id, turnTimeoutMs)
    waiting = false
    if (closed) return granted ? turns.release(id) : undefined
    if (!granted) {
      client.send(errorResponse(`local-postgres: waited ${turnTimeoutMs} ms for another connection's transaction to end (PGlite runs one at a time)`))
      return shutdown()
    }
    holding = true
    for (const chunk of queued.splice(0)) forward(chunk)
    maybeRelease()
  }

  server.on('data', (chunk) => {
    client.send(chunk)
    readServer(chunk)
    maybeRelease()
  })
  server.on('error', shutdown)
  server.on('close', shutdown)

  return {
    receive(data) {
      if (closed) return
      let chunk = data
      if (preamble) {
        // Answer SSL/GSS encryption requests with 'N' (plain connection); drop cancel requests (PGlite has no backend to signal).
        chunk = Buffer.concat([preamble, chunk])
        while (chunk.length >= 8) {
          const code = chunk.readInt32BE(4)
          if (code === SSL_REQUEST_CODE || code === GSSENC_REQUEST_CODE) {
            client.send(Buffer.from('N'))
            chunk = chunk.subarray(8)
          } else if (code === CANCEL_REQUEST_CODE) return shutdown()
          else break
        }
        if (chunk.length < 8) {
          preamble = chunk
          return
        }
        preamble = undefined
      }
      readClient(chunk)
      if (holding) {
        forward(chunk)
        maybeRelease()
      } else {
        queued.push(chunk)
        if (!waiting) void waitForTurn()
      }
    },
    closed: shutdown,
  }
}

/**
 * Splits a Postgres byte stream into messages without copying them, calling `onMessage` with each one's type byte
 * (0 for the untyped startup message when `startup`) and, for ReadyForQuery, its transaction status byte.
 */
function messageReader(startup: boolean, onMessage: (type: number, status?: number) => void): (chunk: Buffer) => void {
  let untyped = startup
  let skip = 0 // bytes of the current message still to pass over
  let head = Buffer.alloc(0) // the next message's header, as far as it has arrived
  return (chunk) => {
    let offset = 0
    for (;;) {
      if (skip > 0) {
        if (offset >= chunk.length) return
        const n = Math.min(skip, chunk.length - offset)
        skip -= n
        offset += n
        continue
      }
      // Startup: [length][protocol]; typed: [type][length], plus the status byte of ReadyForQuery.
      const need = untyped ? 8 : head.length > 0 && head[0] === READY_FOR_QUERY ? 6 : 5
      if (head.length < need) {
        if (offset >= chunk.length) return
        const take = Math.min(need - head.length, chunk.length - offset)
        head = Buffer.concat([head, chunk.subarray(offset, offset + take)])
        offset += take
        continue
      }
      if (untyped) {
        untyped = false
        skip = head.readInt32BE(0) - need
        onMessage(0)
      } else {
        skip = 1 + head.readInt32BE(1) - need
        onMessage(head[0]!, need === 6 ? head[5] : undefined)
      }
      head = Buffer.alloc(0)
    }
  }
}

/** A FATAL ErrorResponse (SQLSTATE 55P03, lock not available) for a client whose connection is being closed. */
function errorResponse(message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C55P03\0M${message}\0\0`, 'utf8')
  const header = Buffer.alloc(5)
  header[0] = 0x45 // 'E'
  header.writeInt32BE(4 + fields.length, 1)
  return Buffer.concat([header, fields])
}
