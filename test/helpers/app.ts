import { readFile } from 'node:fs/promises'
import { inject } from 'vitest'
import { createApp, type AppDeps } from '../../src/app.js'
import { migrateRoutes } from '../../src/migrate/routes.js'
import { openPglite } from '../../src/db-node.js'
import { createToken } from '../../src/api-tokens/store.js'
import { SYSTEM_ACTOR } from '../../src/core/principal.js'

/** A fresh database (a copy of the migrated template) and the app on top of it, with an admin token. */
export async function createTestApp(options: { now?: () => Date; delivery?: AppDeps['delivery']; publicUrl?: string; email?: AppDeps['email']; sdk?: AppDeps['sdk']; background?: AppDeps['background']; allowPasswordLogin?: boolean; signIn?: AppDeps['signIn']; clientAddress?: AppDeps['clientAddress']; signalsPerMinute?: number; streams?: AppDeps['streams']; evaluation?: AppDeps['evaluation']; notReady?: AppDeps['notReady']; log?: AppDeps['log']; observe?: AppDeps['observe'] } = {}) {
  const template = await readFile(inject('pgTemplatePath'))
  const database = await openPglite({ loadDataDir: new Blob([template]) })
  const clock = options.now ?? (() => new Date())
  const app = createApp({ nodeRoutes: [migrateRoutes], db: () => database.db, clock, delivery: options.delivery, publicUrl: options.publicUrl, email: options.email, sdk: options.sdk, background: options.background, allowPasswordLogin: options.allowPasswordLogin, signIn: options.signIn, clientAddress: options.clientAddress, signalsPerMinute: options.signalsPerMinute, streams: options.streams, evaluation: options.evaluation, notReady: options.notReady, log: options.log, observe: options.observe })
  const adminToken = (
    await createToken(database.db, { actor: SYSTEM_ACTOR, now: clock() }, { tokenName: 'test-admin', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })
  ).secret

  /** Calls the app like an HTTP client; `body` objects are sent as JSON. */
  async function call(method: string, path: string, options: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...(options.headers ?? {}) }
    const token = options.token === undefined ? adminToken : options.token
    if (token !== null) headers.authorization = token
    let body: string | undefined
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
      headers['content-type'] ??= 'application/json'
    }
    return answerOf(await app.request(path, { method, headers, body }))
  }

  /** Runs SQL directly, to check what a request did (or did not) write. */
  async function query<T = Record<string, unknown>>(sqlText: string, params: unknown[] = []): Promise<T[]> {
    return (await database.client.query<T>(sqlText, params)).rows
  }

  async function close() {
    await app.endStreams()
    await app.idle()
    await database.close()
  }

  return { app, db: database.db, adminToken, call, query, close }
}

export type TestApp = Awaited<ReturnType<typeof createTestApp>>

/** A response as tests read it: the status, the headers, the body as text and, when it is JSON, parsed. */
export async function answerOf(response: Response): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const text = await response.text()
  let body: any
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    body = undefined
  }
  return { status: response.status, headers: response.headers, body, text }
}
