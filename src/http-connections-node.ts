import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { Server as NetServer, type Socket } from 'node:net'
import { validationError } from './core/errors.js'
import { errorBody, statusOf } from './http/errors.js'

/** The requests a connection has in flight (taken, not answered yet). */
const IN_FLIGHT = Symbol('requests in flight')
type Counted = Socket & { [IN_FLIGHT]?: number }

/**
 * The Node server's connections, each with its requests in flight, for a shutdown that answers every request it has
 * taken: it stops listening, lets the event loop read what has already arrived, then ends (FIN, never a reset) each
 * connection once it has no request in flight; those left at the deadline are cut.
 */
export function trackConnections(server: Server) {
  const sockets = new Set<Counted>()
  let draining = false
  let accepted = 0
  server.on('connection', (socket: Counted) => {
    accepted++
    socket[IN_FLIGHT] = 0
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  // Per request (each SDK poll): a counter on its socket and one shared listener, nothing allocated.
  function answered(this: ServerResponse) {
    const socket = this.req.socket as Counted
    const left = (socket[IN_FLIGHT] ?? 1) - 1
    socket[IN_FLIGHT] = left
    if (draining && left === 0) socket.end()
  }
  // Before the server's own listener: an answer written at once (the SDK poll's 304, src/fast-poll-node.ts) is counted
  // and, while draining, already tells the client to send nothing more on this connection.
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket as Counted
    socket[IN_FLIGHT] = (socket[IN_FLIGHT] ?? 0) + 1
    // Tells the client not to send another request on this connection.
    if (draining) response.shouldKeepAlive = false
    response.on('close', answered)
  })
  return {
    /** Resolves once every connection has closed (ended when idle; cut at `deadline`, a Date.now() time). */
    async drain(deadline: number) {
      // Connections the kernel has completed but the process has not accepted yet would be reset when it stops listening:
      // it keeps accepting (and reading) until a few turns of the event loop accept nothing more (a busy loop accepts a
      // few a turn), for at most three quarters of the wait (GET /ready has answered 503 since the signal).
      const acceptUntil = Date.now() + (Math.max(0, deadline - Date.now()) * 3) / 4
      for (let seen = -1; seen !== accepted && Date.now() < acceptUntil; ) {
        seen = accepted
        for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setTimeout(resolve, 5))
      }
      // Stops listening: net's close, not http's, which would destroy the connections it deems idle (see above).
      const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()))
      draining = true
      // Connections accepted last may hold a request not read yet: two turns of the event loop read it.
      for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setTimeout(resolve, 1))
      for (const socket of sockets) if (socket[IN_FLIGHT] === 0) socket.end()
      const cut = setTimeout(() => {
        for (const socket of sockets) socket.destroy()
      }, Math.max(0, deadline - Date.now()))
      await closed
      clearTimeout(cut)
    },
  }
}

/**
 * Ends an event stream (`GET /api/client/streaming`) as soon as its client hangs up. The server keeps a half-closed
 * connection open to answer it (`httpAllowHalfOpen`, see src/server.ts), so a client's FIN alone closes nothing: a
 * stream, which never finishes, stayed open (in `flagpost_streams_open` and the per-address and per-token stream
 * limits) until a keep-alive written into the dead connection failed, one or two keep-alive intervals later. An SDK
 * reading a stream never half-closes its side, so the FIN is its disconnect: the response is destroyed, which cancels
 * the stream's body and aborts its request's signal (the hub drops it). Other answers are unchanged.
 */
export function endStreamsOnHangUp<Env>(fetch: (request: Request, env: Env) => Response | Promise<Response>) {
  const watch = (response: Response, env: Env) => {
    // The status first: reading `headers` makes node-server's light answer (a 304's) build a Headers object.
    if (response.status !== 200 || !response.headers.get('content-type')?.startsWith('text/event-stream')) return response
    // node-server's bindings: this server speaks HTTP/1.1 only.
    const { incoming, outgoing } = env as { incoming: IncomingMessage; outgoing: ServerResponse }
    // Pipelined behind another answer on its connection (Node gives it the socket when that answer ends, and a stream
    // never ends): it would be counted and never sent, and a hang-up could not reach it. Refused, its stream cancelled.
    if (!outgoing.socket) {
      void response.body?.cancel()
      const refused = validationError('A stream cannot be pipelined behind another request on its connection: open it on a connection of its own')
      return Response.json(errorBody(refused), { status: statusOf(refused) })
    }
    const socket = incoming.socket
    // A body the stream never reads would hold the socket paused, so its end (the client's hang-up) would go unseen.
    incoming.resume()
    const hangUp = () => outgoing.destroy()
    // Hung up while the stream was being made: ended once node-server has started writing it.
    if (socket.readableEnded) setImmediate(hangUp)
    else {
      socket.once('end', hangUp)
      outgoing.once('close', () => socket.off('end', hangUp))
    }
    return response
  }
  return (request: Request, env: Env) => {
    const answer = fetch(request, env)
    // Only a GET opens a stream: every other answer passes untouched.
    if (request.method !== 'GET') return answer
    return answer instanceof Promise ? answer.then((response) => watch(response, env)) : watch(answer, env)
  }
}
