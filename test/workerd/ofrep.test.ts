// OpenFeature's official OFREP providers against the deployable worker bundle in workerd (Miniflare), behind the static
// assets as on Cloudflare (wrangler.toml's run_worker_first must send /ofrep/* to the worker).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Miniflare } from 'miniflare'
import { OFREPProvider } from '@openfeature/ofrep-provider'
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider'
import { OpenFeature as ServerFeature } from '@openfeature/server-sdk'
import { OpenFeature as WebFeature } from '@openfeature/web-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalPostgres, type LocalPostgres } from '../../dev/local-postgres.js'
import { createToken as createTokenInDb } from '../../src/api-tokens/store.js'
import { SYSTEM_ACTOR } from '../../src/core/principal.js'
import { answerOf } from '../helpers/app.js'
import { migratedTemplate } from '../helpers/data-dir.js'
import { createFlag, createProject, createToken, enableFlag, ok, type Caller } from '../helpers/factories.js'
import { assetsOptions, builtWorker, readWranglerConfig, workerModuleOptions } from './build.js'

let tempDir: string | undefined
let postgres: LocalPostgres | undefined
let mf: Miniflare | undefined
let admin: Caller
let project: string
let client: string
let frontend: string

/** fetch, through the worker: what the providers are given. */
async function workerFetch(input: Request | string | URL, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init)
  const body = request.method === 'GET' ? undefined : await request.text()
  return (await mf!.dispatchFetch(request.url, { method: request.method, headers: Object.fromEntries(request.headers), body })) as unknown as Response
}

beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), 'flagpost-workerd-ofrep-'))
  const config = await readWranglerConfig()
  const [scriptPath, pg] = await Promise.all([builtWorker(), migratedTemplate().then((loadDataDir) => startLocalPostgres({ loadDataDir, migrate: true }))])
  postgres = pg
  const adminToken = (await createTokenInDb(pg.database.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'workerd-admin', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret
  mf = new Miniflare({
    ...workerModuleOptions(scriptPath, config),
    ...assetsOptions(config),
    bindings: { DATABASE_URL: pg.databaseUrl, NEON_WS_PROXY: pg.wsProxy, NEON_FETCH_ENDPOINT: pg.fetchEndpoint },
  })
  await mf.ready
  admin = {
    call: async (method, path, options = {}) =>
      answerOf(
        await workerFetch(`http://flagpost.test${path}`, {
          method,
          headers: { authorization: adminToken, ...(options.body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
        }),
      ),
  }
  project = await createProject(admin)
  for (const name of ['on', 'off', 'text']) await createFlag(admin, { name: `${project}-${name}` }, project)
  await enableFlag(admin, `${project}-on`, 'development', project)
  await enableFlag(admin, `${project}-text`, 'development', project)
  await ok(admin, 'PUT', `/api/admin/projects/${project}/features/${project}-text/environments/development/variants`, [
    { name: 'greeting', weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'Hello' } },
  ])
  client = (await createToken(admin, { type: 'client', environment: 'development', projects: [project] })).secret
  frontend = (await createToken(admin, { type: 'frontend', environment: 'development', projects: [project] })).secret
}, 120_000)

afterAll(async () => {
  await ServerFeature.close()
  await WebFeature.close()
  await mf?.dispose()
  await postgres?.close()
  if (tempDir) await rm(tempDir, { recursive: true, force: true })
})

describe('OFREP in workerd', () => {
  it('serves the server provider with a client token: values, variants, unknown flags and type mismatches', async () => {
    await ServerFeature.setProviderAndWait('workerd-server', new OFREPProvider({ baseUrl: 'http://flagpost.test', headers: [['Authorization', `Bearer ${client}`]], fetchImplementation: workerFetch }))
    const of = ServerFeature.getClient('workerd-server')
    expect(await of.getBooleanDetails(`${project}-on`, false)).toMatchObject({ value: true, reason: 'STATIC' })
    expect(await of.getBooleanDetails(`${project}-off`, true)).toMatchObject({ value: false, reason: 'DISABLED' })
    expect(await of.getStringDetails(`${project}-text`, 'none', { targetingKey: 'u1' })).toMatchObject({ value: 'Hello', variant: 'greeting' })
    expect(await of.getBooleanDetails('no-such-flag', true)).toMatchObject({ value: true, errorCode: 'FLAG_NOT_FOUND' })
    expect(await of.getNumberDetails(`${project}-text`, 3)).toMatchObject({ value: 3, errorCode: 'TYPE_MISMATCH' })
  })

  it('serves the web provider with a frontend token from the bulk endpoint, 304 for its ETag', async () => {
    const statuses: number[] = []
    const fetchImplementation = async (input: Request | string | URL, init?: RequestInit) => {
      const response = await workerFetch(input, init)
      statuses.push(response.status)
      return response
    }
    const provider = new OFREPWebProvider({ baseUrl: 'http://flagpost.test', headers: [['Authorization', frontend]], pollInterval: 100, cacheMode: 'disabled', disableVisibilityRefresh: true, fetchImplementation })
    await WebFeature.setContext('workerd-web', { targetingKey: 'u1' })
    await WebFeature.setProviderAndWait('workerd-web', provider)
    const of = WebFeature.getClient('workerd-web')
    expect(of.getBooleanValue(`${project}-on`, false)).toBe(true)
    expect(of.getStringValue(`${project}-text`, 'none')).toBe('Hello')
    expect(of.getBooleanDetails(`${project}-off`, true)).toMatchObject({ value: true, errorCode: 'FLAG_NOT_FOUND' })
    const deadline = Date.now() + 10_000
    while (!statuses.includes(304) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(statuses).toContain(304)
    await WebFeature.clearProviders()
  })

  it('answers its configuration at the edge to an SDK token, 401 without one', async () => {
    const get = (headers: Record<string, string>) => workerFetch('http://flagpost.test/ofrep/v1/configuration', { headers }).then(answerOf)
    const res = await get({ authorization: `Bearer ${client}` })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ name: 'Flagpost', capabilities: { cacheInvalidation: { polling: { enabled: true } }, flagEvaluation: { supportedTypes: expect.arrayContaining(['boolean', 'object']) } } })
    expect((await get({})).status).toBe(401)
  })

  it('answers errors in OFREP’s shape: 401 for a bad token, 400 PARSE_ERROR, 404 FLAG_NOT_FOUND', async () => {
    const post = (path: string, token: string, body: string) =>
      workerFetch(`http://flagpost.test/ofrep/v1/evaluate/flags${path}`, { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body }).then(answerOf)
    expect((await post(`/${project}-on`, 'Bearer nope', '{}')).status).toBe(401)
    const parse = await post(`/${project}-on`, client, '{')
    expect(parse.status).toBe(400)
    expect(parse.body).toMatchObject({ key: `${project}-on`, errorCode: 'PARSE_ERROR', name: 'ValidationError' })
    const missing = await post('/nothing', client, '{}')
    expect(missing.status).toBe(404)
    expect(missing.body).toMatchObject({ key: 'nothing', errorCode: 'FLAG_NOT_FOUND' })
  })
})
