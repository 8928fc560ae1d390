import type { LogLevel } from './http/request-log.js'

/** Where the buffered writer writes (process.stdout and process.stderr by default; tests pass their own). */
export interface LogStream {
  write(chunk: string): unknown
}

export interface BufferedLogWriter {
  /** The logger's `write` (LogOptions.write): info and debug lines are buffered, warn and error written at once. */
  write(line: string, level: LogLevel): void
  /** Writes the buffered lines now (synchronously when the stream is: stdout to a file or, on Linux, a pipe). */
  flush(): void
  /** Stops flushing on exit (tests). */
  close(): void
}

/** A flush as soon as this much is buffered, whatever the turn of the event loop. */
export const LOG_BUFFER_BYTES = 16_384

/**
 * The Node server's log lines, one a line as before (LOG_FORMAT, LOG_LEVEL), with fewer writes: stdout to a pipe or a
 * file is synchronous in Node, one write system call per `write`, so at LOG_LEVEL info every answered request (each SDK
 * poll) cost one. Info and debug lines are kept and written together once the event loop turns (setImmediate: after the
 * answers of this turn are written) or at once when 16 KiB are waiting, and on the process's exit (process.exit after a
 * shutdown, an uncaught exception or an unhandled rejection: Node emits `exit` before it ends). Warnings and errors are
 * written at once, after what was buffered (their order with the request lines is kept). Only a SIGKILL, or the machine
 * stopping, loses what one turn of the event loop buffered. A SIGHUP flushes, then ends the process as it would have.
 */
export function bufferedLogWriter(streams: { stdout: LogStream; stderr: LogStream } = process, maxBytes = LOG_BUFFER_BYTES): BufferedLogWriter {
  let pending: string[] = []
  let bytes = 0
  let scheduled: ReturnType<typeof setImmediate> | undefined
  const flush = () => {
    if (scheduled !== undefined) {
      clearImmediate(scheduled)
      scheduled = undefined
    }
    if (pending.length === 0) return
    const chunk = `${pending.join('\n')}\n`
    pending = []
    bytes = 0
    streams.stdout.write(chunk)
  }
  const onExit = () => flush()
  process.on('exit', onExit)
  // A hang-up (SIGHUP, which the server does not handle) ends the process without `exit`: flushed first, then the
  // signal is raised again, to end it as it would have (unless someone else took the signal meanwhile).
  const onHangUp = () => {
    flush()
    if (process.listenerCount('SIGHUP') === 0) process.kill(process.pid, 'SIGHUP')
  }
  process.once('SIGHUP', onHangUp)
  return {
    write(line, level) {
      if (level === 'error' || level === 'warn') {
        flush()
        streams.stderr.write(`${line}\n`)
        return
      }
      pending.push(line)
      bytes += line.length + 1
      if (bytes >= maxBytes) flush()
      else if (scheduled === undefined) scheduled = setImmediate(flush)
    },
    flush,
    close() {
      flush()
      process.off('exit', onExit)
      process.off('SIGHUP', onHangUp)
    },
  }
}
