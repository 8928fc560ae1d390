import { readFile } from 'node:fs/promises'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inject } from 'vitest'
import { createApp } from '../src/app.js'
import { createToken } from '../src/api-tokens/store.js'
import { openPg, openPglite, type NodeDbHandle } from '../src/db-node.js'
import { queryRows } from '../src/db.js'
import { SYSTEM_ACTOR } from '../src/core/principal.js'
import { sql } from 'drizzle-orm'

// The server with DATABASE_URL talks to Postgres through node-postgres, the one driver that keeps named
// prepared statements per connection (see statement in src/db.ts). Here it runs against PGlite over the wire protocol.
let embedded: Awaited<ReturnType<typeof openPglite>>
let server: PGLiteSocketServer
let database: NodeDbHandle
let app: ReturnType<typeof createApp>
let call: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>

beforeAll(async () => {
  embedded = await openPglite({ loadDataDir: new Blob([await readFile(inject('pgTemplatePath'))]) })
  server = new PGLiteSocketServer({ db: embedded.client, host: '127.0.0.1', port: 0 })
  await server.start()
  // PGlite serves one connection at a time.
  process.env.DATABASE_POOL_SIZE = '1'
  database = openPg(`postgres://postgres@127.0.0.1:${server.getServerConn().split(':').pop()}/postgres`)
  delete process.env.DATABASE_POOL_SIZE
  app = createApp({ db: () => database.db })
  const token = (await createToken(database.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'admin', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret
  call = async (method, path, body) => {
    const res = await app.request(path, { method, headers: { authorization: token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : undefined }
  }
})
afterAll(async () => {
  await app?.idle()
  await database?.close()
  await server?.stop()
  await embedded?.close()
})

describe('node-postgres (DATABASE_URL)', () => {
  it('runs writes and reads with prepared statements reused across calls', async () => {
    expect((await call('POST', '/api/admin/projects/default/features', { name: 'wire' })).status).toBe(201)
    for (let i = 0; i < 8; i++) {
      const toggled = await call('POST', `/api/admin/projects/default/features/wire/environments/development/${i % 2 ? 'off' : 'on'}`)
      expect(toggled.status).toBe(200)
      expect(toggled.body.environments.find((e: any) => e.name === 'development').enabled).toBe(i % 2 === 0)
      const patched = await call('PATCH', '/api/admin/projects/default/features/wire', [{ op: 'replace', path: '/description', value: `round ${i}` }])
      expect(patched.body.description).toBe(`round ${i}`)
      const overview = await call('GET', '/api/admin/projects/default')
      expect(overview.body.features.find((f: any) => f.name === 'wire').description).toBe(`round ${i}`)
    }
    const events = await call('GET', '/api/admin/events/wire')
    expect(events.body.totalEvents).toBe(1 + 8 + 1 + 8) // created, 8 switches, the first strategy, 8 descriptions
    const statements = await queryRows<{ name: string }>(database.db, sql`select name from pg_prepared_statements`)
    expect(statements.map((s) => s.name)).toEqual(
      expect.arrayContaining([
        'flagpost_token_principal',
        'flagpost_create_flag',
        'flagpost_feature_named',
        'flagpost_feature_for_change',
        'flagpost_switch_on_stage_default_strategy',
        'flagpost_switch_environment',
        'flagpost_patch_flag',
        'flagpost_record_events',
        'flagpost_project_overview',
        'flagpost_project_features',
        'flagpost_feature_events',
      ]),
    )
  })
})
