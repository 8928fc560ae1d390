import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { nodeWebhookSend, type Resolve } from '../src/webhook-node.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject, fresh } from './helpers/factories.js'

// Webhooks from Node resolve the host name, refuse private addresses unless allowed, connect to exactly the
// address checked, and keep the system's error words (addresses, ports) out of the delivery log.

let receiver: Server
let port: number
let hits: string[] = []
/** What the test's "DNS" answers, and how often it was asked. */
let answers: string[] = []
let lookups = 0
const resolve: Resolve = async () => {
  lookups++
  return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    hits.push(`${req.headers.host} ${req.url} ${req.headers.authorization ?? ''}`)
    req.resume()
    req.on('end', () => res.writeHead(200).end('ok'))
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
  port = (receiver.address() as AddressInfo).port
})
afterAll(() => new Promise((r) => receiver.close(r)))
beforeEach(() => {
  hits = []
  lookups = 0
})

/** A webhook for the flags of a fresh project, and the one delivery a new flag there makes (no other test's webhook fires). */
async function deliverOnce(t: TestApp, url: string) {
  const project = await createProject(t)
  const created = await t.call('POST', '/api/admin/addons', {
    body: { provider: 'webhook', enabled: true, parameters: { url, authorization: 'Bearer secret-of-the-hook' }, events: ['feature-created'], projects: [project] },
  })
  expect(created.status, created.text).toBe(200)
  await createFlag(t, { name: fresh('hooked') }, project)
  await t.app.idle()
  const log = await t.call('GET', `/api/admin/addons/${created.body.id}/events`)
  expect(log.status).toBe(200)
  return log.body.integrationEvents[0] as { state: string; stateDetails: string }
}

describe('webhook targets on Node', () => {
  let t: TestApp
  let allowing: TestApp
  beforeAll(async () => {
    t = await createTestApp({ delivery: { send: nodeWebhookSend(resolve), timeoutMs: 2_000 } })
    allowing = await createTestApp({ delivery: { send: nodeWebhookSend(resolve), allowPrivateTargets: true, timeoutMs: 2_000 } })
  })
  afterAll(async () => {
    await t.close()
    await allowing.close()
  })

  it('refuses a host name that resolves to a loopback address: nothing (no Authorization header) reaches it', async () => {
    answers = ['127.0.0.1']
    const delivery = await deliverOnce(t, `http://hooks.example.test:${port}/in`)
    expect(delivery).toMatchObject({ state: 'failed', stateDetails: expect.stringContaining('private address') })
    expect(hits).toEqual([])
  })

  it('refuses a name with any private address among its answers', async () => {
    answers = ['93.184.216.34', '10.0.0.8']
    expect(await deliverOnce(t, `http://mixed.example.test:${port}/in`)).toMatchObject({ state: 'failed', stateDetails: expect.stringContaining('private address') })
    expect(hits).toEqual([])
  })

  it('reaches the private address when allowed, connecting to exactly the address it resolved once (the name exists in no real DNS)', async () => {
    answers = ['127.0.0.1']
    const delivery = await deliverOnce(allowing, `http://hooks.example.test:${port}/in`)
    expect(delivery).toMatchObject({ state: 'success' })
    expect(lookups).toBe(1)
    expect(hits).toEqual([`hooks.example.test:${port} /in Bearer secret-of-the-hook`])
  })

  it('keeps connection details out of the delivery log: no address, port or system error', async () => {
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
    const closedPort = (closed.address() as AddressInfo).port
    await new Promise((r) => closed.close(r))
    answers = ['127.0.0.1']
    const delivery = await deliverOnce(allowing, `http://scan.example.test:${closedPort}/`)
    expect(delivery.state).toBe('failed')
    expect(delivery.stateDetails).toBe('Webhook request failed: the connection could not be made or was broken')
    expect(delivery.stateDetails).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|\d{4,5}/)
  })

  it('says generically when a name does not resolve', async () => {
    answers = []
    expect(await deliverOnce(t, 'http://nowhere.example.test/')).toMatchObject({ state: 'failed', stateDetails: 'Webhook request refused: the host name could not be resolved' })
  })
})
