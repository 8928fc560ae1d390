// Limits of the README's "Limits" table that no other test file holds.
import { describe, expect, it } from 'vitest'
import { streamHub } from '../src/client-api/streaming.js'
import { frontendContext } from '../src/frontend-api/context.js'
import { createTestApp } from './helpers/app.js'
import { flagOnWithClientToken } from './helpers/factories.js'

describe('SDK streams on this server (FLAGPOST_MAX_STREAMS)', () => {
  it('answers 429 TooManyRequestsError past the total, whatever the token or address, and takes a stream again once one ends', async () => {
    const t = await createTestApp({ streams: streamHub({ maxConnections: 1 }) })
    try {
      const first = await flagOnWithClientToken(t)
      const second = await flagOnWithClientToken(t)
      const open = (token: string) => {
        const controller = new AbortController()
        return { controller, response: t.app.request('/api/client/streaming', { headers: { authorization: token, 'unleash-client-spec': '5.2.0' }, signal: controller.signal }) }
      }
      const held = open(first.token)
      expect((await held.response).status).toBe(200)
      const refused = await open(second.token).response
      expect(refused.status).toBe(429)
      expect((await refused.json()) as { name: string; message: string }).toMatchObject({ name: 'TooManyRequestsError', message: expect.stringContaining('on this server') })
      held.controller.abort()
      await (await held.response).body?.cancel().catch(() => {})
      await expect.poll(async () => {
        const again = open(second.token)
        const status = (await again.response).status
        again.controller.abort()
        await (await again.response).body?.cancel().catch(() => {})
        return status
      }).toBe(200)
    } finally {
      await t.close()
    }
  })
})

describe('the frontend API context', () => {
  it('keeps at most 100 properties and 1,000 characters of each value', () => {
    const fields: Record<string, unknown> = { userId: 'u'.repeat(5_000) }
    for (let i = 0; i < 150; i++) fields[`field${i}`] = `value ${i}`
    fields.properties = { long: 'x'.repeat(5_000) }
    const context = frontendContext(fields, { environment: 'development' })
    expect(Object.keys(context.properties ?? {})).toHaveLength(100)
    expect(context.properties?.field0).toBe('value 0')
    expect(context.properties?.field120).toBeUndefined()
    expect(context.userId).toHaveLength(1_000)
  })
})
