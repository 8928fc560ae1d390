// GET /ready: the readiness probe (GET /health stays the liveness check). 200 only while the process should take
// traffic: its database answers with every migration of this version applied, and the Node server runs its background
// jobs and is not shutting down; 503 BAD with the reason otherwise.
import { readFile } from 'node:fs/promises'
import { rm } from 'node:fs/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { MIGRATIONS } from '../src/health/migrations.js'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { sql } from 'drizzle-orm'
import { openPg, openPglite } from '../src/db-node.js'
import { readConfig, startServer } from '../src/server.js'
import { createTestApp } from './helpers/app.js'
import { migratedDataDir, migratedTemplate } from './helpers/data-dir.js'

describe('GET /ready', () => {
  it('knows how many migrations this version has (schema/migrations/meta/_journal.json)', async () => {
    const journal = JSON.parse(await readFile(new URL('../schema/migrations/meta/_journal.json', import.meta.url), 'utf8'))
    expect(MIGRATIONS).toBe(journal.entries.length)
  })

  it('is 503 while a migration of this version is not applied, 200 once it is', async () => {
    const t = await createTestApp()
    try {
      expect(await t.call('GET', '/ready', { token: null })).toMatchObject({ status: 200, body: { health: 'GOOD' } })
      const [last] = await t.query<{ id: number; hash: string; created_at: string }>('select * from drizzle.__drizzle_migrations order by id desc limit 1')
      await t.query('delete from drizzle.__drizzle_migrations where id = $1', [last!.id])
      const res = await t.call('GET', '/ready', { token: null })
      expect(res.status).toBe(503)
      expect(res.body).toEqual({ health: 'BAD', reason: `the database has ${MIGRATIONS - 1} of this version's ${MIGRATIONS} migrations applied` })
      await t.query('insert into drizzle.__drizzle_migrations (id, hash, created_at) values ($1, $2, $3)', [last!.id, last!.hash, last!.created_at])
      expect((await t.call('GET', '/ready', { token: null })).status).toBe(200)
    } finally {
      await t.close()
    }
  })

  it('is 503 when the database cannot be queried', async () => {
    const t = await createTestApp()
    try {
      await t.query('alter schema drizzle rename to drizzle_away')
      expect(await t.call('GET', '/ready', { token: null })).toMatchObject({ status: 503, body: { health: 'BAD', reason: 'the database cannot be queried' } })
    } finally {
      await t.close()
    }
  })

  it("is 503 with the process's own reason (shutting down)", async () => {
    let reason: string | undefined
    const t = await createTestApp({ notReady: () => reason })
    try {
      expect((await t.call('GET', '/ready', { token: null })).status).toBe(200)
      reason = 'shutting down'
      expect(await t.call('GET', '/ready', { token: null })).toMatchObject({ status: 503, body: { health: 'BAD', reason: 'shutting down' } })
    } finally {
      await t.close()
    }
  })
})

describe('GET /ready on the Node server', () => {
  const dirs: string[] = []
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true })
  })

  it('is 200 once the server listens with its background jobs running', async () => {
    const dataDir = await migratedDataDir('flagpost-ready-')
    dirs.push(dataDir)
    const server = await startServer({ ...readConfig({}), port: 0, host: '127.0.0.1', dataDir })
    try {
      const res = await fetch(`${server.url}/ready`)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ health: 'GOOD' })
    } finally {
      await server.close()
    }
  })

  it('is 503 while its Postgres (DATABASE_URL) is stopped, the process still serving, and 200 once it is back', async () => {
    // A Postgres over the wire: PGlite behind a socket server, stopped and started again on the same port.
    const embedded = await openPglite({ loadDataDir: await migratedTemplate() })
    let postgres = new PGLiteSocketServer({ db: embedded.client, host: '127.0.0.1', port: 0 })
    await postgres.start()
    const port = Number(postgres.getServerConn().split(':').pop())
    const errors: string[] = []
    // PGlite serves one connection at a time.
    process.env.DATABASE_POOL_SIZE = '1'
    const server = await startServer({
      ...readConfig({}),
      port: 0,
      host: '127.0.0.1',
      databaseUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
      log: { format: 'json', level: 'warn', write: (line) => void errors.push(line) },
    }).finally(() => delete process.env.DATABASE_POOL_SIZE)
    try {
      expect((await fetch(`${server.url}/ready`)).status).toBe(200)
      // Stopped: its connections closed under the pool (idle ones included), new ones refused.
      await postgres.stop()
      const res = await fetch(`${server.url}/ready`)
      expect(res.status).toBe(503)
      expect(await res.json()).toEqual({ health: 'BAD', reason: 'the database cannot be queried' })
      // The pool's connection closed under it while idle: logged, not an unheard 'error' event ending the process.
      await expect.poll(() => errors.some((line) => line.includes('database connection lost')), { timeout: 5_000 }).toBe(true)
      postgres = new PGLiteSocketServer({ db: embedded.client, host: '127.0.0.1', port })
      await postgres.start()
      await expect.poll(async () => (await fetch(`${server.url}/ready`)).status, { timeout: 10_000 }).toBe(200)
    } finally {
      await server.close()
      await postgres.stop()
      await embedded.close()
    }
  })

  it('rejects a transaction whose connection closes under it, the process still running (no unheard error event)', async () => {
    const embedded = await openPglite({ loadDataDir: await migratedTemplate() })
    const postgres = new PGLiteSocketServer({ db: embedded.client, host: '127.0.0.1', port: 0 })
    await postgres.start()
    process.env.DATABASE_POOL_SIZE = '1'
    const handle = openPg(`postgres://postgres@127.0.0.1:${postgres.getServerConn().split(':').pop()}/postgres`)
    delete process.env.DATABASE_POOL_SIZE
    try {
      const transaction = handle.db.transaction(async (tx) => {
        await tx.execute(sql`select 1`)
        // The database goes away while the transaction holds its connection.
        await postgres.stop()
        await new Promise((resolve) => setTimeout(resolve, 300))
        await tx.execute(sql`select 2`)
      })
      await expect(transaction).rejects.toThrow()
    } finally {
      await handle.close().catch(() => {})
      await embedded.close()
    }
  })
})
