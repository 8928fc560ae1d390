// Child processes of the side-by-side benchmark, and the clean-up that stops them whatever happens.
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'

/** Clean-up steps, run last-registered first by `cleanUp()`; each runs once. */
const steps: { name: string; run: () => Promise<void>; onExit?: () => void }[] = []

/** Registers a clean-up step; `onExit` is a synchronous last resort for when the process exits without `cleanUp()`. */
export function onCleanUp(name: string, run: () => Promise<void>, onExit?: () => void) {
  steps.push({ name, run, onExit })
}

export async function cleanUp() {
  while (steps.length > 0) {
    const step = steps.pop()!
    try {
      await step.run()
    } catch (error) {
      console.error(`clean-up "${step.name}" failed:`, error instanceof Error ? error.message : error)
    }
  }
}

let interrupted = false
/** Whether a signal is stopping the benchmark (what fails after it is a consequence, not news). */
export const isInterrupted = () => interrupted

process.on('exit', () => {
  for (const step of steps.reverse()) {
    try {
      step.onExit?.()
    } catch {}
  }
})
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (interrupted) return
    interrupted = true
    console.error(`\n${signal}: stopping everything the benchmark started...`)
    cleanUp().finally(() => process.exit(130))
  })
}

export interface Child {
  name: string
  process: ChildProcess
  /** The last 64 KiB of what it printed (stdout and stderr). */
  output(): string
  /** Resolves with the first match of `pattern` in its output; rejects when it exits first or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>
  /** SIGTERM to its whole process group, SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>
}

/** Starts a command in a process group of its own (so that its whole tree can be killed) and registers its stop. */
export function startChild(name: string, command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Child {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const listeners = new Set<() => void>()
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-65_536)
    for (const listener of listeners) listener()
  }
  child.stdout!.on('data', append)
  child.stderr!.on('data', append)
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    child.once('exit', () => resolve())
    child.once('error', () => resolve())
  })
  const running = () => child.exitCode === null && child.signalCode === null && child.pid !== undefined
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal)
    } catch {}
  }
  const handle: Child = {
    name,
    process: child,
    output: () => output,
    waitFor(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output)
          if (match) finish(() => resolve(match))
        }
        const timer = setTimeout(() => finish(() => reject(new Error(`${name} did not print ${pattern} within ${timeoutMs / 1000} s. Its output:\n${output}`))), timeoutMs)
        const onExit = () => finish(() => reject(new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before printing ${pattern}. Its output:\n${output}`)))
        const finish = (settle: () => void) => {
          clearTimeout(timer)
          listeners.delete(check)
          child.off('exit', onExit)
          settle()
        }
        listeners.add(check)
        child.once('exit', onExit)
        check()
      })
    },
    async stop(graceMs = 10_000) {
      if (!running()) return
      killGroup('SIGTERM')
      const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref())
      if ((await Promise.race([exited, timer])) === 'timeout') {
        killGroup('SIGKILL')
        await exited
      }
      // Anything the process left in its group (it should leave nothing).
      killGroup('SIGKILL')
    },
  }
  onCleanUp(`stop ${name}`, () => handle.stop(), () => running() && killGroup('SIGKILL'))
  return handle
}

/** A TCP port that is free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}
