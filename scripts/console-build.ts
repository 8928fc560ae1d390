import { createHash } from 'node:crypto'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

const root = fileURLToPath(new URL('..', import.meta.url))
const consoleDir = join(root, 'console')
const stamp = join(consoleDir, 'dist', '.sources-hash')
/** The files outside console/ that the console imports: a change to one builds it again. */
const CONSOLE_SHARED_SOURCES = ['src/core/local-path.ts']

async function sourcesHash(): Promise<string> {
  const hash = createHash('sha256')
  const walk = async (dir: string): Promise<void> => {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name === 'dist' || entry.name === 'node_modules') continue
      const path = join(dir, entry.name)
      if (entry.isDirectory()) await walk(path)
      else hash.update(path).update(await readFile(path))
    }
  }
  await walk(consoleDir)
  // The pure modules of src/ the console imports (one code for the server and the console).
  for (const shared of CONSOLE_SHARED_SOURCES) hash.update(shared).update(await readFile(join(root, shared)))
  hash.update(await readFile(join(root, 'package-lock.json')))
  return hash.digest('hex')
}

/**
 * Builds the web console into console/dist (as `npm run console:build`), unless it was already built from
 * exactly these sources: the tests build it themselves, and a second test run does not pay for it again.
 */
export async function buildConsoleIfChanged(): Promise<void> {
  const hash = await sourcesHash()
  const built = await readFile(stamp, 'utf8').catch(() => '')
  if (built === hash) return
  // A process of its own: in a test runner NODE_ENV is "test", which would build React's development code.
  const { stdout } = await promisify(execFile)(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', join(consoleDir, 'vite.config.ts'), '--logLevel', 'warn'], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production' },
  })
  process.stdout.write(stdout)
  await writeFile(stamp, hash)
}
