import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONSOLE_HEADERS } from '../src/console-headers.js'
import { withConsole } from '../src/console-node.js'
import { createTestApp, type TestApp } from './helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

describe('API documentation', () => {
  it('serves an OpenAPI document generated from the routes, with the token scheme and error responses', async () => {
    const res = await t.call('GET', '/docs/openapi.json', { token: null })
    expect(res.status).toBe(200)
    const doc = res.body
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' })
    const create = doc.paths['/api/admin/projects'].post
    expect(create.operationId).toBe('createProject')
    expect(create.security).toEqual([{ apiKey: [] }])
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '403', '409', '415']))
    for (const [path, operations] of Object.entries<Record<string, { responses: Record<string, unknown>; operationId: string }>>(doc.paths)) {
      for (const operation of Object.values(operations)) {
        expect(operation.operationId, path).toBeTruthy()
        if (path.startsWith('/api/admin')) expect(Object.keys(operation.responses), path).toEqual(expect.arrayContaining(['401', '403']))
      }
    }
  })

  it('serves an API reference page that loads only files of its own origin, under the console\'s CSP', async () => {
    const res = await t.call('GET', '/docs', { token: null })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    for (const [name, value] of Object.entries(CONSOLE_HEADERS)) expect([name, res.headers.get(name)]).toEqual([name, value])
    const csp = res.headers.get('content-security-policy')!
    expect(csp).toMatch(/(^|; )script-src 'self'(;|$)/)
    expect(csp).not.toMatch(/https?:|\*|'unsafe-eval'/)
    const { scripts, inline, styles } = pageFiles(res.text)
    expect(scripts.length).toBeGreaterThan(0)
    expect(inline, 'inline scripts (the CSP refuses them)').toEqual([])
    for (const url of [...scripts, ...styles]) expect(url, 'a file of another origin').toMatch(/^\/[^/]/)
    expect(res.text).toContain('data-document="/docs/openapi.json"')
  })

  it('finds the files it references among the web console\'s, served with the console\'s headers (the Node home)', async () => {
    const page = await t.call('GET', '/docs', { token: null })
    const { scripts, styles } = pageFiles(page.text)
    expect(scripts.length).toBeGreaterThan(0)
    for (const url of [...scripts, ...styles]) expect(url, 'a file of another origin').toMatch(/^\/[^/]/)
    const front = withConsole((request) => t.app.fetch(request))
    for (const [path, type] of [...scripts.map((s) => [s, /javascript/]), ...styles.map((s) => [s, /text\/css/])] as [string, RegExp][]) {
      const file = await front(new Request(`http://localhost${path}`))
      expect([path, file.status, file.headers.get('content-type')]).toEqual([path, 200, expect.stringMatching(type)])
      expect(file.headers.get('content-security-policy')).toBe(CONSOLE_HEADERS['Content-Security-Policy'])
      expect((await file.text()).length, path).toBeGreaterThan(100)
    }
    expect(await (await front(new Request('http://localhost/api-reference/init.js'))).text()).toContain('SwaggerUIBundle')
  })
})

/** The scripts (by src), inline scripts and style sheets of a page. */
function pageFiles(html: string) {
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
  return {
    scripts: scripts.map((m) => /\bsrc="([^"]*)"/.exec(m[1]!)?.[1]).filter((src): src is string => src !== undefined),
    inline: scripts.filter((m) => !/\bsrc=/.test(m[1]!) && m[2]!.trim() !== '').map((m) => m[2]),
    styles: [...html.matchAll(/<link\b[^>]*\bhref="([^"]*)"/g)].map((m) => m[1]!),
  }
}
