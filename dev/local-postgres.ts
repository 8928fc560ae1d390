// A local Postgres for the Workers build (wrangler dev, workerd tests, bench:edge), Node only: embedded PGlite
// served over the Postgres wire protocol, and an HTTP server that speaks what Neon's serverless driver speaks
// to Neon: SQL over HTTP (`neon()` queries and `transaction([...])` batches, the driver's `fetchEndpoint`) and
// the plain-WebSocket relay of its Pool (the driver's `wsProxy`).
//
//   neon() ---http POST /sql---> SQL endpoint --pg--\
//   Neon Pool ---ws /v1--------> relay -------------+--> gate (one transaction at a time) --tcp--> pglite-socket --> PGlite
//   pg, psql ---tcp---------------------------------/
//
// The gate exists because PGlite is a single session: pglite-socket interleaves its connections message by
// message, so two clients' extended-protocol batches (Parse/Bind/Execute/Sync) trample each other's unnamed
// statement ("unnamed prepared statement does not exist"). The gate lets one connection at a time through, from
// its first message to the ReadyForQuery that leaves it idle (out of any transaction), like pgbouncer would. The
// SQL endpoint runs its queries over wire-protocol connections through the gate too. The gate drops password
// messages (PGlite asks for none), so Neon's driver connects as it does to Neon: startup, password and first
// query in one flight (`pipelineConnect`).
//
// SQL over HTTP, the subset @neondatabase/serverless 1.x sends (read from its `neon()`):
// - `POST /sql` with a JSON body, `{ "query": "select $1", "params": ["1"] }` or, for a batch,
//   `{ "queries": [{ "query": …, "params": […] }, …] }`. Params are what the driver's `prepareValue` makes of
//   them: strings (arrays as Postgres array literals, JSON as text, bytea as `\x…`) or null.
// - Headers: `Neon-Connection-String` (required; its user, password and database are not checked: the one
//   local database answers), `Neon-Raw-Text-Output: true` (the only output spoken: every value as Postgres'
//   text, which the driver parses by `dataTypeID`), `Neon-Array-Mode` (`true`: rows as arrays; `false`: as
//   objects by column name), and for batches `Neon-Batch-Isolation-Level` (ReadUncommitted, ReadCommitted,
//   RepeatableRead, Serializable), `Neon-Batch-Read-Only` and `Neon-Batch-Deferrable` (`true`/`false`).
//   `Authorization` (Neon's JWT auth) is ignored.
// - A query runs alone, in the extended protocol (one statement, no multi-statement text), in autocommit. A
//   batch is one transaction: BEGIN (with the batch's isolation level, read-only and deferrable modes), its
//   queries in order, COMMIT; ROLLBACK as soon as one fails.
// - 200 answers `{ command, rowCount, rows, fields: [{ name, dataTypeID, tableID, columnID, dataTypeSize,
//   dataTypeModifier, format }], rowAsArray }` for a query, `{ results: [that, …] }` for a batch. A database
//   error answers 400 with Postgres' error fields (`message`, `severity`, `code`, `detail`, `hint`, `position`,
//   `where`, `schema`, `table`, `column`, `dataType`, `constraint`, `file`, `line`, `routine`…), which the driver
//   turns into a NeonDbError carrying them (so a unique violation keeps its `code` 23505); a request the
//   endpoint cannot read answers 400 with a `message` only, anything else 500 with a text body.
//
// For a benchmark of the worker's database round trips (bench/edge.ts), every HTTP request and every
// WebSocket flight can be slowed by an added latency and is counted once answered. A flight is client data
// sent after the server last answered (or the WebSocket's opening handshake): a request answered in one go is
// one round trip whatever its size, and a message that gets no answer (Terminate) costs the client none. The
// latency delays an HTTP request's answer by the whole round trip (half before the query runs, half after), a
// WebSocket's handshake by the whole, and its data by half in each direction.
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import pg from 'pg'
import { WebSocketServer, type RawData, type WebSocket } from 'ws'
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
  /** Port of the HTTP server of `fetchEndpoint` and `wsProxy` (default 0: a free port). */
  httpPort?: number
  /** Concurrent connections accepted (default 100); they still take turns, one transaction at a time. */
  maxConnections?: number
  /** How long a connection may wait for its turn before it gets an error and is closed (default 10 s). */
  turnTimeoutMs?: number
  /** Milliseconds added to every round trip through the HTTP server (default 0; see the header). */
  latencyMs?: number
}

/** Database round trips through the HTTP server since it started, counted when answered. */
export interface RoundTrips {
  /** SQL-over-HTTP requests (a query or a batch). */
  http: number
  /** WebSocket flights, opening handshakes included. */
  webSocket: number
}

export interface LocalPostgres {
  /** postgres:// URL of the server (any user and password are accepted), for `DATABASE_URL`. */
  databaseUrl: string
  /** What to put in the worker's `NEON_WS_PROXY`: the relay's `host:port/path`, without `ws://`. */
  wsProxy: string
  /** What to put in the worker's `NEON_FETCH_ENDPOINT`: the URL of the SQL-over-HTTP endpoint. */
  fetchEndpoint: string
  /** The PGlite database itself (drizzle handle and raw client), for seeding and checking between requests. */
  database: NodeDbHandle & { client: PGlite }
  /** WebSocket connections through the relay: open now, and opened since the start. */
  relayConnections(): { open: number; total: number }
  /** Database round trips answered through the HTTP server so far. */
  roundTrips(): RoundTrips
  /** Sets the latency added to the round trips of requests and connections that start from now on. */
  setLatency(ms: number): void
  /** Stops the relay and the servers, then closes PGlite (idempotent). */
  close(): Promise<void>
}

/** Starts PGlite, a Postgres server and Neon's HTTP and WebSocket endpoints in front of it; all on free local ports by default. */
export async function startLocalPostgres(options: LocalPostgresOptions = {}): Promise<LocalPostgres> {
  const host = options.host ?? '127.0.0.1'
  const maxConnections = options.maxConnections ?? 100
  const turnTimeoutMs = options.turnTimeoutMs ?? 10_000
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
    const gate = await startGate(host, options.port ?? 0, (client) => openSession(client, upstream, turns, turnTimeoutMs))
    stops.push(gate.close)
    const databaseUrl = `postgres://postgres:postgres@${host}:${gate.port}/postgres`

    // The SQL endpoint's own connections, through the gate like any client's.
    const sqlPool = new pg.Pool({ connectionString: databaseUrl, max: 10 })
    sqlPool.on('error', () => {}) // an idle connection the gate closed: the pool drops it
    stops.push(() => sqlPool.end())

    let latencyMs = options.latencyMs ?? 0
    const neon = await startNeonServer(host, options.httpPort ?? 0, {
      latency: () => latencyMs,
      sql: (request) => answerSql(sqlPool, request),
      relay: (client) => openSession(client, upstream, turns, turnTimeoutMs),
    })
    stops.push(neon.close)

    let closing: Promise<void> | undefined
    return {
      databaseUrl,
      // src/db.ts gives the driver `wsProxy` as a function, so it connects to `ws://` + this string as is.
      wsProxy: `${host}:${neon.port}/v1`,
      fetchEndpoint: `http://${host}:${neon.port}/sql`,
      database,
      relayConnections: () => ({ open: neon.openWebSockets, total: neon.totalWebSockets }),
      roundTrips: () => ({ ...neon.roundTrips }),
      setLatency: (ms) => void (latencyMs = ms),
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

interface NeonHandlers {
  /** The latency to add to a round trip starting now, in ms. */
  latency(): number
  sql(request: SqlRequest): Promise<SqlAnswer>
  relay(client: ClientEnd): Session
}

/** The HTTP server of Neon's two endpoints: SQL over HTTP (`POST /sql`) and the WebSocket relay (any path). */
async function startNeonServer(host: string, port: number, handlers: NeonHandlers) {
  const roundTrips: RoundTrips = { http: 0, webSocket: 0 }
  let totalWebSockets = 0
  const later = (ms: number, run: () => void) => (ms > 0 ? void setTimeout(run, ms) : run())

  const server = createHttpServer((request, response) => {
    void serveSql(request, response).catch(() => response.destroy())
  })
  const serveSql = async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'POST' || new URL(request.url ?? '/', 'http://local').pathname !== '/sql') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('local-postgres: POST /sql (SQL over HTTP) or a WebSocket')
      return
    }
    const half = handlers.latency() / 2
    const body = await readBody(request)
    await new Promise<void>((resolve) => later(half, resolve))
    const answer: SqlAnswer =
      body === undefined
        ? { status: 413, contentType: 'application/json', body: JSON.stringify({ message: `local-postgres: a request body may hold ${MAX_BODY_BYTES} bytes` }) }
        : await handlers.sql({ headers: request.headers, body }).catch((error: unknown) => ({ status: 500, contentType: 'text/plain', body: `local-postgres: ${String(error)}` }))
    await new Promise<void>((resolve) => later(half, resolve))
    roundTrips.http++
    response.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body)
  }

  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false })
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    totalWebSockets++
    const latency = handlers.latency()
    later(latency, () =>
      wss.handleUpgrade(request, socket, head, (ws) => {
        roundTrips.webSocket++
        relay(ws, latency / 2)
      }),
    )
  })
  /** One WebSocket's binary messages are a Postgres byte stream, as Neon's proxy expects. */
  const relay = (ws: WebSocket, half: number) => {
    let asked = false // client data has come since the server last answered: a flight, counted once answered
    const session = handlers.relay({
      send: (chunk) =>
        later(half, () => {
          if (ws.readyState !== ws.OPEN) return
          if (asked) roundTrips.webSocket++
          asked = false
          ws.send(chunk, { binary: true })
        }),
      close: () => later(half, () => ws.close()),
    })
    ws.on('message', (data: RawData) => {
      asked = true
      const chunk = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)
      later(half, () => session.receive(chunk))
    })
    ws.on('error', () => ws.terminate())
    ws.on('close', () => later(half, () => session.closed()))
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  return {
    port: (server.address() as AddressInfo).port,
    roundTrips,
    get openWebSockets() {
      return wss.clients.size
    },
    get totalWebSockets() {
      return totalWebSockets
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate()
        wss.close()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const MAX_BODY_BYTES = 16 * 1024 * 1024

/** The request's body as text; undefined when it is larger than MAX_BODY_BYTES. */
async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) return undefined
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

interface SqlRequest {
  headers: IncomingMessage['headers']
  body: string
}

interface SqlAnswer {
  status: number
  contentType: string
  body: string
}

interface SqlQuery {
  text: string
  values: (string | null)[]
}

/** A request the endpoint cannot read: 400 with its message, as Neon answers. */
class BadSqlRequest extends Error {}

const ISOLATION_LEVELS: Record<string, string> = {
  ReadUncommitted: 'read uncommitted',
  ReadCommitted: 'read committed',
  RepeatableRead: 'repeatable read',
  Serializable: 'serializable',
}

/** The error fields of Postgres that the driver copies onto its NeonDbError. */
const ERROR_FIELDS = ['severity', 'code', 'detail', 'hint', 'position', 'internalPosition', 'internalQuery', 'where', 'schema', 'table', 'column', 'dataType', 'constraint', 'file', 'line', 'routine'] as const

/** Every value as Postgres' text, as `Neon-Raw-Text-Output: true` asks. */
const RAW_TEXT = { getTypeParser: () => (value: string) => value } as unknown as pg.CustomTypesConfig

const json = (status: number, value: unknown): SqlAnswer => ({ status, contentType: 'application/json', body: JSON.stringify(value) })

function readQuery(value: unknown): SqlQuery {
  const { query, params = [] } = (value ?? {}) as { query?: unknown; params?: unknown }
  if (typeof query !== 'string') throw new BadSqlRequest('each query needs its text in `query` (a string)')
  if (!Array.isArray(params)) throw new BadSqlRequest('`params` must be an array')
  const values = params.map((p) => {
    if (p === null || typeof p === 'string') return p
    if (typeof p === 'number' || typeof p === 'boolean') return String(p)
    throw new BadSqlRequest('a param must be a string, a number, a boolean or null')
  })
  return { text: query, values }
}

function readSqlRequest({ headers, body }: SqlRequest) {
  const header = (name: string) => {
    const value = headers[name]
    return Array.isArray(value) ? value[0] : value
  }
  if (!header('neon-connection-string')) throw new BadSqlRequest('missing the Neon-Connection-String header')
  if (header('neon-raw-text-output') !== 'true') throw new BadSqlRequest('local-postgres answers only with Neon-Raw-Text-Output: true')
  const arrayMode = header('neon-array-mode') === 'true'
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    throw new BadSqlRequest('the body is not JSON')
  }
  const queries = (parsed as { queries?: unknown } | null)?.queries
  if (queries === undefined) return { arrayMode, queries: [readQuery(parsed)] }
  if (!Array.isArray(queries)) throw new BadSqlRequest('`queries` must be an array')
  const level = header('neon-batch-isolation-level')
  if (level !== undefined && !ISOLATION_LEVELS[level]) throw new BadSqlRequest(`unknown Neon-Batch-Isolation-Level ${level}`)
  const flag = (name: string, yes: string, no: string) => {
    const value = header(name)
    return value === 'true' ? ` ${yes}` : value === 'false' ? ` ${no}` : ''
  }
  const begin = `begin${level ? ` isolation level ${ISOLATION_LEVELS[level]}` : ''}${flag('neon-batch-read-only', 'read only', 'read write')}${flag('neon-batch-deferrable', 'deferrable', 'not deferrable')}`
  return { arrayMode, queries: queries.map(readQuery), begin }
}

async function runQuery(client: pg.PoolClient, query: SqlQuery, arrayMode: boolean) {
  // Extended protocol even without params: one statement per query, as Neon runs it.
  const result = await client.query({ text: query.text, values: query.values, rowMode: 'array', types: RAW_TEXT, queryMode: 'extended' } as pg.QueryArrayConfig)
  const fields = result.fields.map(({ name, dataTypeID, tableID, columnID, dataTypeSize, dataTypeModifier, format }) => ({ name, dataTypeID, tableID, columnID, dataTypeSize, dataTypeModifier, format }))
  const rows = arrayMode ? result.rows : result.rows.map((row) => Object.fromEntries(fields.map((f, i) => [f.name, row[i]])))
  return { command: result.command, rowCount: result.rowCount, rows, fields, rowAsArray: arrayMode }
}

function errorAnswer(error: unknown): SqlAnswer {
  if (!(error instanceof pg.DatabaseError)) return { status: 500, contentType: 'text/plain', body: `local-postgres: ${error instanceof Error ? error.message : String(error)}` }
  return json(400, { message: error.message, ...Object.fromEntries(ERROR_FIELDS.map((f) => [f, error[f]])) })
}

/** Answers one SQL-over-HTTP request (see the header): a query in autocommit, or a batch as one transaction. */
async function answerSql(pool: pg.Pool, request: SqlRequest): Promise<SqlAnswer> {
  let parsed: ReturnType<typeof readSqlRequest>
  try {
    parsed = readSqlRequest(request)
  } catch (error) {
    if (error instanceof BadSqlRequest) return json(400, { message: error.message })
    throw error
  }
  let client: pg.PoolClient
  try {
    client = await pool.connect()
  } catch (error) {
    return errorAnswer(error)
  }
  // A connection that failed other than with a statement's error (the gate's turn timed out, it closed) is not reused.
  let broken = false
  try {
    if (parsed.begin === undefined) return json(200, await runQuery(client, parsed.queries[0]!, parsed.arrayMode))
    await client.query(parsed.begin)
    try {
      const results = []
      for (const query of parsed.queries) results.push(await runQuery(client, query, parsed.arrayMode))
      await client.query('commit')
      return json(200, { results })
    } catch (error) {
      await client.query('rollback').catch(() => (broken = true))
      throw error
    }
  } catch (error) {
    if (!(error instanceof pg.DatabaseError) || error.severity === 'FATAL' || error.severity === 'PANIC') broken = true
    return errorAnswer(error)
  } finally {
    client.release(broken)
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
const PASSWORD_MESSAGE = 0x70 // 'p' (password, SASL)
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

  const stripPasswords = passwordStripper()
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
      chunk = stripPasswords(chunk)
      if (chunk.length === 0) return
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
 * Drops the client's password messages from its byte stream. PGlite asks for no password, but Neon's driver
 * sends one right after its startup message, before the server asks (`pipelineConnect`, one round trip less
 * per connection, as it connects to Neon), and PGlite would take it for a query.
 */
function passwordStripper(): (chunk: Buffer) => Buffer {
  let untyped = true // the startup message comes first
  let head = Buffer.alloc(0)
  let rest = 0 // bytes of the current message still to come
  let dropping = false
  return (chunk) => {
    const kept: Buffer[] = []
    let offset = 0
    while (offset < chunk.length) {
      if (rest > 0) {
        const n = Math.min(rest, chunk.length - offset)
        if (!dropping) kept.push(chunk.subarray(offset, offset + n))
        rest -= n
        offset += n
        continue
      }
      const need = untyped ? 4 : 5
      const take = Math.min(need - head.length, chunk.length - offset)
      head = Buffer.concat([head, chunk.subarray(offset, offset + take)])
      offset += take
      if (head.length < need) break
      dropping = !untyped && head[0] === PASSWORD_MESSAGE
      if (!dropping) kept.push(head)
      rest = (untyped ? head.readInt32BE(0) : head.readInt32BE(1) + 1) - need
      untyped = false
      head = Buffer.alloc(0)
    }
    return kept.length === 1 ? kept[0]! : Buffer.concat(kept)
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
