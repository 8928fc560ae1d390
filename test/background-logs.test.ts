// Background jobs log through the app's logger (LOG_FORMAT, LOG_LEVEL) with the id of what they work on: webhook
// deliveries, action set runs, metrics aggregation, scheduled change requests; an error is one JSON line with its stack.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { fresh, ok } from './helpers/factories.js'
import { backgroundJob } from '../src/http/background.js'
import { createLogger } from '../src/http/request-log.js'
import type { Db } from '../src/db.js'
import { sql } from 'drizzle-orm'

const lines: string[] = []
const logged = () => lines.map((line) => JSON.parse(line) as Record<string, any>)
let t: TestApp
let status = 500
beforeAll(async () => {
  t = await createTestApp({ log: { format: 'json', level: 'info', write: (line) => void lines.push(line) }, delivery: { allowPrivateTargets: true, send: async () => status } })
})
afterAll(() => t.close())

describe('background job logs', () => {
  it('a webhook delivery logs its id, integration, event and outcome', async () => {
    const addon = (await ok(t, 'POST', '/api/admin/addons', { provider: 'webhook', enabled: true, parameters: { url: 'https://hooks.example.com/x' }, events: ['feature-created'] })).body
    const flag = (await ok(t, 'POST', '/api/admin/projects/default/features', { name: fresh('logged') })).body.name
    await t.app.idle()
    const [event] = await t.query<{ id: number }>("select id from events where type = 'feature-created' and feature_name = $1", [flag])
    const line = logged().find((l) => l.msg === 'webhook delivery' && l.eventId === Number(event!.id))
    expect(line).toMatchObject({ level: 'info', job: 'integration_deliveries', deliveryId: expect.any(Number), integrationId: addon.id, state: 'failed', stateDetails: 'Webhook request failed with status code: 500' })
    await ok(t, 'DELETE', `/api/admin/addons/${addon.id}`)
  })

  it('an action set run logs its id, its action set and how it ended', async () => {
    const project = (await ok(t, 'POST', '/api/admin/projects', { id: fresh('logs'), name: 'Logs' })).body.id as string
    const flag = (await ok(t, 'POST', `/api/admin/projects/${project}/features`, { name: fresh('kill') })).body.name as string
    const endpoint = (await ok(t, 'POST', '/api/admin/signal-endpoints', { name: fresh('alerts') })).body
    const token = (await ok(t, 'POST', `/api/admin/signal-endpoints/${endpoint.id}/tokens`, { name: 'grafana' })).body.token
    const actor = (await ok(t, 'POST', '/api/admin/service-account', { username: fresh('bot'), name: 'Bot', rootRole: 'Editor' })).body.id
    const set = (
      await ok(t, 'POST', `/api/admin/projects/${project}/actions`, {
        name: fresh('on'),
        actorId: actor,
        match: { source: 'signal-endpoint', sourceId: endpoint.id, payload: {} },
        actions: [{ action: 'TOGGLE_FEATURE_ON', sortOrder: 1, executionParams: { environment: 'development', featureName: flag } }],
      })
    ).body
    expect((await t.call('POST', `/api/signal-endpoint/${endpoint.name}`, { token: `Bearer ${token}`, body: {} })).status).toBe(200)
    await t.app.idle()
    const [run] = await t.query<{ id: number }>('select id from action_set_events where action_set_id = $1', [set.id])
    expect(logged().find((l) => l.msg === 'action run' && l.actionSetId === set.id)).toMatchObject({ level: 'info', job: 'action_runs', runId: Number(run!.id), state: 'success' })
  })

  it('a report the metrics aggregation cannot fold: one JSON line at error with its id and stack', async () => {
    const [row] = await t.query<{ id: number }>(
      `insert into client_metrics_inbox (received_at, kind, app_name, environment, projects, token_name, payload)
       values (now(), 'metrics', 'broken-app', 'development', '{*}', 'x', $1) returning id`,
      [JSON.stringify({ bucket: { start: '2026-03-01T11:00:00Z', stop: '2026-03-01T11:00:00Z', toggles: { 'secret-flag-value': { yes: 'many-secret', no: 0 } } } })],
    )
    const client = (await ok(t, 'POST', '/api/admin/api-tokens', { tokenName: 'sdk', type: 'client', projects: ['*'], environment: 'development' })).body.secret
    const start = new Date().toISOString()
    expect((await t.call('POST', '/api/client/metrics', { token: client, body: { appName: 'fine-app', instanceId: 'i', bucket: { start, stop: start, toggles: {} } } })).status).toBe(202)
    await t.app.idle()
    const index = logged().findIndex((l) => l.reportId === Number(row!.id))
    const line = logged()[index]!
    expect(line).toMatchObject({ level: 'error', msg: 'metrics aggregation: dropping a report that cannot be folded', job: 'metrics_aggregation', error: expect.stringContaining('Failed query') })
    expect(line.stack).toMatch(/\n\s+at /)
    expect(lines[index]).not.toContain('\n')
  })

  it('a background job that throws: one JSON line at error naming the job, with its stack', async () => {
    const written: string[] = []
    const logger = createLogger({ format: 'json', level: 'warn', write: (line) => void written.push(line) })
    const job = backgroundJob('webhook sweep', async () => { throw new TypeError('boom') }, { background: (_c, task) => void task({} as Db), coalesce: true, logger })
    job.schedule({} as never)
    await job.idle()
    expect(written).toHaveLength(1)
    expect(written[0]).not.toContain('\n')
    expect(JSON.parse(written[0]!)).toMatchObject({ level: 'error', msg: 'background job failed', job: 'webhook sweep', error: 'boom', stack: expect.stringMatching(/^TypeError: boom\n\s+at /) })
  })

  it('a failed query logs its statement, SQLSTATE and constraint, never a value the database quotes back', async () => {
    const written: string[] = []
    const logger = createLogger({ format: 'json', level: 'warn', write: (line) => void written.push(line) })
    const run = async (name: string, work: (db: Db) => Promise<unknown>) => {
      const job = backgroundJob(name, work, { background: (_c, task) => void task(t.db), coalesce: true, logger })
      job.schedule({} as never)
      await job.idle()
      return JSON.parse(written.at(-1)!) as Record<string, string>
    }
    // The message quotes the value: `invalid input syntax for type integer: "…"`.
    const malformed = await run('malformed', (db) => db.execute(sql`select ${'secret-value-8f3a'}::int`))
    // The detail holds it: `Key (name)=(…) already exists`.
    const name = fresh('secret-tag-type-51c2')
    await t.db.execute(sql`insert into tag_types (name) values (${name})`)
    const duplicate = await run('duplicate', (db) => db.execute(sql`insert into tag_types (name) values (${name})`))
    expect(written).toHaveLength(2)
    for (const line of written) {
      expect(line).not.toContain('secret-value-8f3a')
      expect(line).not.toContain(name)
      expect(line).not.toContain('Key (')
    }
    expect(malformed).toMatchObject({ level: 'error', job: 'malformed', error: expect.stringContaining('select $1::int') })
    expect(malformed.error).toMatch(/invalid input syntax for type integer: "…" \(code 22P02\)/)
    expect(duplicate.error).toMatch(/insert into tag_types \(name\) values \(\$1\): duplicate key value violates unique constraint "(\w+)" \(code 23505, constraint \1\)/)
  })
})
