// The Node server's log lines go through a buffer (src/log-writer-node.ts): one write per turn of the event loop instead
// of one per request, each line still whole and in order, and nothing lost when the process exits, crashes or is stopped.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createLogger } from '../src/http/request-log.js'
import { bufferedLogWriter, LOG_BUFFER_BYTES } from '../src/log-writer-node.js'

const streams = () => {
  const out: string[] = []
  const err: string[] = []
  const both: string[] = []
  return {
    out,
    err,
    both,
    stdout: { write: (chunk: string) => (out.push(chunk), both.push(chunk)) },
    stderr: { write: (chunk: string) => (err.push(chunk), both.push(chunk)) },
  }
}
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

describe('the buffered log writer', () => {
  it('writes the lines of one turn of the event loop in one write, in order, one line each', async () => {
    const s = streams()
    const writer = bufferedLogWriter(s)
    try {
      const logger = createLogger({ format: 'json', level: 'info', write: writer.write })
      for (let i = 0; i < 50; i++) logger.log('info', 'request', { n: i })
      expect(s.out).toEqual([])
      await nextTurn()
      expect(s.out).toHaveLength(1)
      const lines = s.out[0]!.split('\n')
      expect(lines.pop()).toBe('')
      expect(lines.map((l) => (JSON.parse(l) as { n: number }).n)).toEqual(Array.from({ length: 50 }, (_, i) => i))
      logger.log('info', 'request', { n: 50 })
      await nextTurn()
      expect(s.out).toHaveLength(2)
    } finally {
      writer.close()
    }
  })

  it('writes at once when 16 KiB are waiting, and writes warnings and errors at once after what was buffered', () => {
    const s = streams()
    const writer = bufferedLogWriter(s)
    try {
      const line = 'x'.repeat(1023)
      for (let i = 0; i < LOG_BUFFER_BYTES / 1024 - 1; i++) writer.write(line, 'info')
      expect(s.out).toEqual([])
      writer.write(line, 'info')
      expect(s.out).toEqual([`${Array(LOG_BUFFER_BYTES / 1024).fill(line).join('\n')}\n`])
      writer.write('a request', 'info')
      writer.write('a failure', 'error')
      expect(s.both).toEqual([s.out[0], 'a request\n', 'a failure\n'])
      expect(s.err).toEqual(['a failure\n'])
    } finally {
      writer.close()
    }
  })

  it.each([
    ['exits (process.exit, as after a shutdown)', 'exit', 0],
    ['throws an uncaught exception', 'throw', 1],
    ['leaves a rejection unhandled', 'reject', 1],
    ['takes SIGTERM and logs in its handler just before process.exit', 'sigterm', 0],
    // Ended by the signal itself, as without the writer (no exit code).
    ['is hung up (SIGHUP, which the server does not handle)', 'sighup', null],
  ])('flushes what it buffered when the process %s', async (_, how, code) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join('test', 'fixtures', 'log-writer-exit.ts'), how], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const exitCode = await new Promise((resolve) => child.on('close', resolve))
    expect(exitCode, stderr).toBe(code)
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as { msg: string; n?: number })
    expect(lines.map((l) => l.n)).toEqual(how === 'sigterm' ? [0, 1, 2, undefined] : [0, 1, 2])
    if (how === 'sigterm') expect(lines.at(-1)!.msg).toBe('stopping')
  }, 30_000)
})
