import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../src/app.js'
import { streamHub } from '../src/client-api/streaming.js'
import { cloudflareClientAddress, limitKey, NETWORK_ALLOWANCE, networkLimitKey, parseTrustProxy, socketClientAddress, type ClientAddress } from '../src/http/client-address.js'
import { readConfig } from '../src/server.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { flagOnWithClientToken } from './helpers/factories.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

/** What @hono/node-server passes as the bindings of a request from this socket peer. */
const fromSocket = (remoteAddress: string) => ({ incoming: { socket: { remoteAddress } } })

/** The address `resolve` finds for a request from `peer` with these headers, read through a real app's route. */
async function addressSeen(resolve: ClientAddress, peer: string | undefined, headers: Record<string, string>) {
  let seen: string | undefined = 'not called'
  const app = createApp({ db: () => t.db, background: () => {}, clientAddress: (c) => (seen = resolve(c)) })
  await app.request('/auth/simple/login', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' }, peer ? fromSocket(peer) : {})
  return seen
}

describe("the client's address on Node", () => {
  it('is the socket peer by default: X-Forwarded-For and CF-Connecting-IP sent by a client are not believed', async () => {
    const resolve = socketClientAddress(readConfig({}).trustProxy)
    expect(await addressSeen(resolve, '198.51.100.7', { 'x-forwarded-for': '203.0.113.1', 'cf-connecting-ip': '203.0.113.2' })).toBe('198.51.100.7')
    // IPv4 peers of a dual-stack socket.
    expect(await addressSeen(resolve, '::ffff:198.51.100.7', {})).toBe('198.51.100.7')
  })

  it('with FLAGPOST_TRUST_PROXY=1, is the right-most X-Forwarded-For entry: what the client wrote to the left of it is not believed', async () => {
    const resolve = socketClientAddress(parseTrustProxy('1'))
    expect(await addressSeen(resolve, '10.0.0.1', { 'x-forwarded-for': '6.6.6.6, 203.0.113.5' })).toBe('203.0.113.5')
    expect(await addressSeen(resolve, '10.0.0.1', {})).toBe('10.0.0.1')
    // An entry that is no address is the client as the proxy wrote it (as Express's proxy-addr): not the proxy itself,
    // which would put everyone behind it in one budget.
    expect(await addressSeen(resolve, '10.0.0.1', { 'x-forwarded-for': 'not-an-address' })).toBe('not-an-address')
  })

  it('reads X-Forwarded-For entries with a port or an IPv6 zone id as the address, not as the end of the walk', async () => {
    const resolve = socketClientAddress(parseTrustProxy('1'))
    expect(await addressSeen(resolve, '10.0.0.1', { 'x-forwarded-for': '203.0.113.5:5555' })).toBe('203.0.113.5')
    expect(await addressSeen(resolve, '10.0.0.1', { 'x-forwarded-for': '[2001:db8::7]:80' })).toBe('2001:db8::7')
    expect(await addressSeen(resolve, '10.0.0.1', { 'x-forwarded-for': '[2001:db8::7]' })).toBe('2001:db8::7')
    expect(await addressSeen(resolve, '10.0.0.1', { 'x-forwarded-for': 'fe80::1%eth0' })).toBe('fe80::1')
    expect(await addressSeen(resolve, 'fe80::9%eth0', {})).toBe('fe80::9')
    // Through a list of proxies too: a proxy's entry with a port is still recognised as that proxy.
    const networks = socketClientAddress(parseTrustProxy('10.0.0.0/8'))
    expect(await addressSeen(networks, '10.0.0.1', { 'x-forwarded-for': '203.0.113.5:1234, 10.2.2.2:443' })).toBe('203.0.113.5')
  })

  it('with a list of proxy networks, walks back only through those proxies', async () => {
    const resolve = socketClientAddress(parseTrustProxy('10.0.0.0/8, 192.0.2.9'))
    expect(await addressSeen(resolve, '10.0.0.1', { 'x-forwarded-for': '203.0.113.5, 192.0.2.9, 10.1.1.1' })).toBe('203.0.113.5')
    expect(await addressSeen(resolve, '10.0.0.1', { 'x-forwarded-for': '6.6.6.6, 203.0.113.5' })).toBe('203.0.113.5')
    // A peer that is not a configured proxy is the client, whatever it forwards.
    expect(await addressSeen(resolve, '198.51.100.7', { 'x-forwarded-for': '203.0.113.5' })).toBe('198.51.100.7')
    expect(await addressSeen(socketClientAddress(parseTrustProxy('loopback')), '127.0.0.1', { 'x-forwarded-for': '203.0.113.5' })).toBe('203.0.113.5')
  })

  it('refuses a FLAGPOST_TRUST_PROXY that is neither a number nor addresses at start, and reads none as trusting nothing', () => {
    expect(() => readConfig({ FLAGPOST_TRUST_PROXY: 'true' })).toThrow(/FLAGPOST_TRUST_PROXY/)
    expect(() => readConfig({ FLAGPOST_TRUST_PROXY: '10.0.0.0/33' })).toThrow(/FLAGPOST_TRUST_PROXY/)
    expect(readConfig({}).trustProxy).toEqual({ hops: 0 })
    expect(readConfig({ FLAGPOST_TRUST_PROXY: 'false' }).trustProxy).toEqual({ hops: 0 })
    expect(readConfig({ FLAGPOST_TRUST_PROXY: '2' }).trustProxy).toEqual({ hops: 2 })
  })

  it('refuses loosely written addresses and hop counts that would trust everything, and matches IPv4-mapped networks', async () => {
    for (const value of ['1.5', '0x10', '010.0.0.1', '10.0.0.0/8, 1.5', '99999999999999999999', '33', '1e3', 'fe80::1%eth0', '10.0.0.0/8/8', '10.0.0.0/08x']) {
      expect(() => readConfig({ FLAGPOST_TRUST_PROXY: value }), value).toThrow(/FLAGPOST_TRUST_PROXY/)
    }
    expect(readConfig({ FLAGPOST_TRUST_PROXY: '32' }).trustProxy).toEqual({ hops: 32 })
    const mapped = socketClientAddress(parseTrustProxy('::ffff:10.0.0.0/104'))
    expect(await addressSeen(mapped, '10.9.9.9', { 'x-forwarded-for': '203.0.113.5' })).toBe('203.0.113.5')
    expect(await addressSeen(mapped, '::ffff:10.9.9.9', { 'x-forwarded-for': '203.0.113.5' })).toBe('203.0.113.5')
    expect(await addressSeen(mapped, '11.0.0.1', { 'x-forwarded-for': '203.0.113.5' })).toBe('11.0.0.1')
  })
})

describe("the client's address on Workers", () => {
  it("is CF-Connecting-IP only, never X-Forwarded-For", async () => {
    expect(await addressSeen(cloudflareClientAddress, undefined, { 'cf-connecting-ip': '203.0.113.8', 'x-forwarded-for': '6.6.6.6' })).toBe('203.0.113.8')
    expect(await addressSeen(cloudflareClientAddress, undefined, { 'x-forwarded-for': '6.6.6.6' })).toBeUndefined()
  })
})

describe('every per-address limit counts the socket peer, not what the client forwards', () => {
  const post = (app: { request: TestApp['app']['request'] }, path: string, peer: string, spoofed: string, body = '{}') =>
    app.request(path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': spoofed, 'cf-connecting-ip': spoofed }, body }, fromSocket(peer))

  it('sign-in, single sign-on legs and invite links: a new X-Forwarded-For per attempt does not reset the count', async () => {
    const app = createApp({ db: () => t.db, background: () => {}, signIn: { perMinute: 2 } })
    for (const path of ['/auth/simple/login', '/invite/some-token/signup']) {
      const statuses = []
      for (let i = 0; i < 3; i++) statuses.push((await post(app, path, '198.51.100.20', `203.0.113.${i}`)).status)
      expect(statuses.slice(0, 2), path).not.toContain(429)
      expect(statuses[2], path).toBe(429)
    }
    const oidc = await app.request('/auth/oidc/login', { headers: { 'x-forwarded-for': '203.0.113.99' } }, fromSocket('198.51.100.21'))
    const oidcAgain = await app.request('/auth/oidc/login', { headers: { 'x-forwarded-for': '203.0.113.98' } }, fromSocket('198.51.100.21'))
    expect((await app.request('/auth/oidc/login', { headers: { 'x-forwarded-for': '203.0.113.97' } }, fromSocket('198.51.100.21'))).status).toBe(429)
    expect([oidc.status, oidcAgain.status]).not.toContain(429)
    // Another peer has its own count.
    expect((await post(app, '/auth/simple/login', '198.51.100.22', '203.0.113.0')).status).not.toBe(429)
  })

  it('signals', async () => {
    const app = createApp({ db: () => t.db, background: () => {}, signalsPerMinute: 2 })
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await post(app, '/api/signal-endpoint/nowhere', '198.51.100.30', `203.0.113.${i}`)).status)
    expect(statuses).toEqual([401, 401, 429])
    expect((await post(app, '/api/signal-endpoint/nowhere', '198.51.100.31', '203.0.113.0')).status).toBe(401)
  })

  it('groups IPv6 addresses by their /64: rotating addresses within one /64 shares one count, another /64 has its own', async () => {
    const app = createApp({ db: () => t.db, background: () => {}, signIn: { perMinute: 2 }, signalsPerMinute: 2 })
    for (const path of ['/auth/simple/login', '/api/signal-endpoint/nowhere']) {
      const statuses = []
      for (let i = 1; i <= 3; i++) statuses.push((await post(app, path, `2001:db8:aa:bb::${i}`, '203.0.113.1')).status)
      expect(statuses[2], path).toBe(429)
      expect((await post(app, path, '2001:db8:aa:bc::1', '203.0.113.1')).status, path).not.toBe(429)
    }
  })

  it('counts a /48 as one with NETWORK_ALLOWANCE times the allowance: rotating /64s in one /48 is refused, the next /48 of the same /32 is not', async () => {
    const app = createApp({ db: () => t.db, background: () => {}, signIn: { perMinute: 1 }, signalsPerMinute: 1 })
    for (const path of ['/auth/simple/login', '/api/signal-endpoint/nowhere']) {
      const statuses = []
      // One attempt from each of NETWORK_ALLOWANCE + 1 /64s of 2001:db8:48::/48: each /64 stays under its own allowance.
      for (let i = 0; i <= NETWORK_ALLOWANCE; i++) statuses.push((await post(app, path, `2001:db8:48:${i.toString(16)}::1`, '203.0.113.1')).status)
      expect(statuses.slice(0, NETWORK_ALLOWANCE), path).not.toContain(429)
      expect(statuses[NETWORK_ALLOWANCE], path).toBe(429)
      // Another /48 in the same /32 has its own counts.
      expect((await post(app, path, '2001:db8:49:1::1', '203.0.113.1')).status, path).not.toBe(429)
    }
  })

  it('counts 6to4, Teredo and IPv4-mapped addresses as the IPv4 address they carry', async () => {
    expect(limitKey('2002:c633:6401::1')).toBe('198.51.100.1')
    expect(limitKey('2002:c633:6401:ffff::abcd')).toBe('198.51.100.1')
    // Teredo: server 65.54.227.120, client 198.51.100.1 (its bits inverted in the last 32 bits).
    expect(limitKey('2001:0:4136:e378:8000:63bf:39cc:9bfe')).toBe('198.51.100.1')
    expect(limitKey('::ffff:198.51.100.1')).toBe('198.51.100.1')
    expect(networkLimitKey('2002:c633:6401::1')).toBeUndefined()
    const app = createApp({ db: () => t.db, background: () => {}, signIn: { perMinute: 3 } })
    const statuses = []
    for (const peer of ['2002:c633:6401::1', '2002:c633:6401:1234::9', '2001:0:4136:e378:8000:63bf:39cc:9bfe', '198.51.100.1']) {
      statuses.push((await post(app, '/auth/simple/login', peer, '203.0.113.1')).status)
    }
    expect(statuses.slice(0, 3)).not.toContain(429)
    expect(statuses[3]).toBe(429)
  })

  it('SDK streams: the /48 counts too, with NETWORK_ALLOWANCE times the allowance', async () => {
    const own = await createTestApp({ streams: streamHub({ maxPerAddress: 1, maxPerToken: 100 }) })
    const opened: { controller: AbortController; response: Response | Promise<Response> }[] = []
    try {
      const { token } = await flagOnWithClientToken(own)
      const open = (peer: string) => {
        const controller = new AbortController()
        const s = { controller, response: own.app.request('/api/client/streaming', { headers: { authorization: token, 'unleash-client-spec': '5.2.0' }, signal: controller.signal }, fromSocket(peer)) }
        opened.push(s)
        return s.response
      }
      for (let i = 0; i < NETWORK_ALLOWANCE; i++) expect((await open(`2001:db8:50:${i.toString(16)}::1`)).status).toBe(200)
      expect((await open('2001:db8:50:ff::1')).status).toBe(429)
      expect((await open('2001:db8:51:1::1')).status).toBe(200)
    } finally {
      for (const s of opened) {
        s.controller.abort()
        await (await s.response).body?.cancel().catch(() => {})
      }
      await own.close()
    }
  })

  it('SDK streams', async () => {
    const own = await createTestApp({ streams: streamHub({ maxPerAddress: 1, maxPerToken: 10 }) })
    try {
      const { token } = await flagOnWithClientToken(own)
      const open = (peer: string, spoofed: string) => {
        const controller = new AbortController()
        const headers = { authorization: token, 'unleash-client-spec': '5.2.0', 'x-forwarded-for': spoofed, 'cf-connecting-ip': spoofed }
        return { controller, response: own.app.request('/api/client/streaming', { headers, signal: controller.signal }, fromSocket(peer)) }
      }
      const first = open('198.51.100.40', '203.0.113.1')
      expect((await first.response).status).toBe(200)
      const second = open('198.51.100.40', '203.0.113.2')
      const refused = await second.response
      expect(refused.status).toBe(429)
      expect(((await refused.json()) as { message: string }).message).toContain('from this address')
      const other = open('198.51.100.41', '203.0.113.1')
      expect((await other.response).status).toBe(200)
      for (const s of [first, other]) {
        s.controller.abort()
        await (await s.response).body?.cancel().catch(() => {})
      }
    } finally {
      await own.close()
    }
  })

  it("SDK metrics' client_ip", async () => {
    const { token } = await flagOnWithClientToken(t)
    const register = await t.app.request(
      '/api/client/register',
      { method: 'POST', headers: { authorization: token, 'content-type': 'application/json', 'x-forwarded-for': '6.6.6.6' }, body: JSON.stringify({ appName: 'addr-app', instanceId: 'addr-1', interval: 10000, strategies: [], started: new Date().toISOString() }) },
      fromSocket('198.51.100.50'),
    )
    expect(register.status).toBeLessThan(300)
    await t.app.idle()
    const rows = await t.query<{ client_ip: string }>("select client_ip from client_instances where instance_id = 'addr-1'")
    expect(rows.map((r) => r.client_ip)).toEqual(['198.51.100.50'])
  })
})

describe('one function for the client address', () => {
  it('src/ reads forwarding headers and the socket peer only in src/http/client-address.ts', async () => {
    const files: string[] = []
    const walk = async (dir: string) => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) await walk(join(dir, entry.name))
        else if (entry.name.endsWith('.ts')) files.push(join(dir, entry.name))
      }
    }
    await walk('src')
    const readers = []
    for (const file of files) {
      // Code, not comments: a header name in quotes, the socket's peer read, Hono's getConnInfo.
      const text = (await readFile(file, 'utf8')).toLowerCase()
      if (/['"`](x-forwarded-for|cf-connecting-ip|x-real-ip|forwarded)['"`]|socket\??\.remoteaddress|getconninfo/.test(text)) readers.push(file)
    }
    expect(readers).toEqual([join('src', 'http', 'client-address.ts')])
  })
})
