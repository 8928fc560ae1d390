// The committed migrations are exactly what the schema says: generating again produces nothing new.
import { execFile } from 'node:child_process'
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
let dir: string | undefined
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('schema/migrations', () => {
  it('match the schema (drizzle-kit generate writes no new migration)', async () => {
    dir = await mkdtemp(join(tmpdir(), 'flagpost-migrations-'))
    const out = join(dir, 'migrations')
    await cp('schema/migrations', out, { recursive: true })
    const before = (await readdir(out)).sort()
    // drizzle-kit takes --out relative to the working directory.
    const { stdout, stderr } = await run('node_modules/.bin/drizzle-kit', ['generate', '--dialect', 'postgresql', '--schema', './schema/index.ts', '--out', relative(process.cwd(), out), '--name', 'drift'])
    const after = (await readdir(out)).sort()
    expect(after, `drizzle-kit found schema changes without a migration: run npm run db:generate\n${stdout}`).toEqual(before)
    expect(`${stdout}${stderr}`).toMatch(/No schema changes/)
  }, 60_000)
})
