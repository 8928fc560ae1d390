// The embedded database (PGlite) has no autovacuum: the Node server analyzes, once the migrations ran and then every
// minute, the tables holding rows without statistics and those changed enough (autovacuum's rule), off the request
// path, each run logged with its duration. The planner's row counts (pg_class.reltuples) follow a big import instead
// of staying those of an empty table.
import { rm } from 'node:fs/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { analyzeTables } from '../src/db-analyze-node.js'
import { openPglite } from '../src/db-node.js'
import { createLogger } from '../src/http/request-log.js'
import { readConfig, startServer } from '../src/server.js'
import { migratedDataDir, migratedTemplate } from './helpers/data-dir.js'
import { adminCaller } from './helpers/server.js'

const ADMIN = '*:*.embedded-analyze-test-admin-token'
const FLAGS = 1_000
const dirs: string[] = []
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

describe('ANALYZE on the embedded database', () => {
  it('analyzes the tables never analyzed at start, then the tables a big import changed, logging each run with its duration', async () => {
    const dataDir = await migratedDataDir('flagpost-analyze-')
    dirs.push(dataDir)
    const lines: { msg: string; tables?: string[]; durationMs?: number }[] = []
    const server = await startServer({
      ...readConfig({ INIT_ADMIN_API_TOKENS: ADMIN }),
      port: 0,
      host: '127.0.0.1',
      dataDir,
      analyzeCheckMs: 100,
      log: { format: 'json', level: 'info', write: (line) => void lines.push(JSON.parse(line)) },
    })
    const analyzed = () => lines.filter((line) => line.msg === 'database analyzed')
    try {
      await expect.poll(() => analyzed().length, { timeout: 10_000 }).toBeGreaterThan(0)
      // The migrated template's seeded tables hold rows and were never analyzed; empty tables need no statistics.
      expect(analyzed()[0]).toMatchObject({ tables: expect.arrayContaining(['public.environments', 'public.roles']), durationMs: expect.any(Number) })
      expect(analyzed()[0]!.tables).not.toContain('public.features')
      // Nothing changed since: no table is analyzed again.
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(analyzed()).toHaveLength(1)

      const names = Array.from({ length: FLAGS }, (_, i) => `analyzed-${i}`)
      const admin = adminCaller(() => server.url, ADMIN)
      await admin('POST', '/api/admin/features-batch/import', {
        project: 'default',
        environment: 'development',
        data: { features: names.map((name) => ({ name, project: 'default', type: 'release' })), featureStrategies: [], featureEnvironments: [], tagTypes: [] },
      })
      await expect.poll(() => analyzed().some((line) => line.tables!.includes('public.features')), { timeout: 10_000 }).toBe(true)
      const run = analyzed().find((line) => line.tables!.includes('public.features'))!
      expect(run.durationMs).toBeGreaterThanOrEqual(0)
      // Tables the import did not touch are left alone.
      expect(run.tables).not.toContain('public.users')
    } finally {
      await server.close()
    }
    const database = await openPglite({ dataDir })
    try {
      const { rows } = await database.client.query<{ reltuples: number }>(`select reltuples from pg_class where oid = 'public.features'::regclass`)
      expect(rows[0]!.reltuples).toBeGreaterThanOrEqual(FLAGS)
    } finally {
      await database.close()
    }
  }, 120_000)

  it('analyzes a table filled and drained between two checks (an inbox) once, not at every check', async () => {
    const database = await openPglite({ loadDataDir: await migratedTemplate() })
    const logger = createLogger({ format: 'json', level: 'warn', write: () => {} })
    try {
      await analyzeTables(database.db, logger)
      // Filled and emptied before any analysis saw a live row: its pages stay (PGlite never vacuums), no statistics.
      await database.client.exec(`insert into client_metrics_inbox (received_at, kind, app_name, environment, projects, token_name, payload) select now(), 'metrics', 'web', 'development', '{*}', 'sdk', '{}'::jsonb from generate_series(1, 5000); delete from client_metrics_inbox`)
      expect(await analyzeTables(database.db, logger)).toContain('public.client_metrics_inbox')
      expect(await analyzeTables(database.db, logger)).not.toContain('public.client_metrics_inbox')
    } finally {
      await database.close()
    }
  })
})
