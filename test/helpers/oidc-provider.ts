// A real OpenID provider for the sign-in tests: oidc-provider (the certified Node implementation) on a local port,
// with one confidential client and test accounts. Its sign-in page lists no password: the test person types the
// e-mail of an account and is signed in as it (consent is given for the client's first sign-in). `tamper` lets a
// test make the provider answer a token whose claims it changed, signed again with the provider's own key (or with
// another key), so the refusals of a bad audience, nonce or signature are made by a real token endpoint. An account's
// `groups` are released as the `groups` claim (UserInfo's) to a client asking the `groups` scope; a test may change them
// between sign-ins. RP-initiated logout is the provider's own (its end-session page, confirmed by `confirmSignOut`).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider'
import { expect } from 'vitest'
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose'

export interface TestAccount {
  email: string
  name?: string
  emailVerified?: boolean
  /** The groups the provider says the account is in (changeable between sign-ins). */
  groups?: string[]
}

export interface TestProvider {
  issuer: string
  discoverUrl: string
  clientId: string
  clientSecret: string
  /** Rewrites the claims of the next ID tokens the token endpoint answers (`undefined`: as issued). */
  tamper: (change: ((claims: JWTPayload) => JWTPayload) | undefined, options?: { foreignKey?: boolean }) => void
  close: () => Promise<void>
}

/** Starts the provider on 127.0.0.1 (a free port) for a client whose callback is `redirectUris`. */
export async function startTestProvider(options: { redirectUris: string[]; accounts: TestAccount[]; clientId?: string; clientSecret?: string; postLogoutRedirectUris?: string[] }): Promise<TestProvider> {
  const clientId = options.clientId ?? 'flagpost-test'
  const clientSecret = options.clientSecret ?? 'flagpost-test-secret-0123456789abcdef'
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const signingKey: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key', use: 'sig', alg: 'RS256' }
  const foreign = (await generateKeyPair('RS256', { extractable: true })).privateKey
  const accounts = new Map(options.accounts.map((a) => [a.email.toLowerCase(), a]))

  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        post_logout_redirect_uris: options.postLogoutRedirectUris ?? [],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: ['test-provider-cookie-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, id) {
      const account = accounts.get(id)
      if (!account) return undefined
      return {
        accountId: id,
        claims: async () => ({ sub: id, email: account.email, email_verified: account.emailVerified ?? true, ...(account.name ? { name: account.name } : {}), ...(account.groups ? { groups: account.groups } : {}) }),
      }
    },
    // The client is the provider's own: consent is given without asking.
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const { client, session } = ctx.oidc
      if (!client || !session?.accountId) return undefined
      const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId)
      const found = grantId ? await ctx.oidc.provider.Grant.find(grantId) : undefined
      const grant = found ?? new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId })
      // What this sign-in asks for (`groups` only when asked).
      grant.addOIDCScope(ctx.oidc.params?.scope ? String(ctx.oidc.params.scope) : 'openid email profile')
      await grant.save()
      session.grantIdFor(client.clientId, grant.jti)
      return grant
    },
  }
  const provider = new Provider(issuer, configuration)

  let change: ((claims: JWTPayload) => JWTPayload) | undefined
  let withForeignKey = false
  provider.use(async (ctx, next) => {
    await next()
    const body = ctx.body as { id_token?: string } | undefined
    if (ctx.path === '/token' && change && body?.id_token) {
      const header = decodeProtectedHeader(body.id_token)
      const key = withForeignKey ? foreign : await importJWK(signingKey, 'RS256')
      ctx.body = { ...body, id_token: await new SignJWT(change(decodeJwt(body.id_token))).setProtectedHeader({ alg: 'RS256', kid: header.kid ?? 'test-key' }).sign(key) }
    }
  })

  const handle = provider.callback()
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const interaction = /^\/interaction\/([^/?]+)$/.exec(new URL(req.url ?? '/', issuer).pathname)
    if (!interaction) return void handle(req, res)
    void (async () => {
      try {
        const details = await provider.interactionDetails(req, res)
        if (req.method === 'GET') {
          res.setHeader('content-type', 'text/html; charset=utf-8')
          res.end(`<!doctype html><html lang="en"><head><title>Test provider</title></head><body><main><h1>Test provider</h1>
<form method="post" action="/interaction/${details.uid}"><label>E-mail <input name="email" type="email" required></label><button type="submit">Continue</button></form></main></body></html>`)
          return
        }
        const form = new URLSearchParams(await new Promise<string>((resolve) => {
          let text = ''
          req.on('data', (chunk: Buffer) => (text += chunk.toString()))
          req.on('end', () => resolve(text))
        }))
        const email = (form.get('email') ?? '').toLowerCase()
        const result = accounts.has(email) ? { login: { accountId: email } } : { error: 'access_denied', error_description: 'No such test account' }
        await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false })
      } catch (error) {
        res.statusCode = 500
        res.end(String(error))
      }
    })()
  })

  return {
    issuer,
    discoverUrl: `${issuer}/.well-known/openid-configuration`,
    clientId,
    clientSecret,
    tamper: (next, opts = {}) => {
      change = next
      withForeignKey = opts.foreignKey ?? false
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/**
 * Follows single sign-out at the provider: opens its end-session page (`endSessionUrl`), says yes to its question, and
 * answers where the provider then sends the browser (the `post_logout_redirect_uri`).
 */
export async function confirmSignOut(agent: ReturnType<typeof browserAgent>, endSessionUrl: string): Promise<URL> {
  const page = await agent.follow(endSessionUrl)
  const html = await page.response.text()
  expect(page.response.status, html).toBe(200)
  const form = /<form[^>]*action="([^"]+)"[\s\S]*?name="xsrf" value="([^"]+)"/.exec(html)
  if (!form) throw new Error(`The provider's end-session page has no form: ${html}`)
  const confirmed = await agent.send(new URL(form[1]!, page.url).toString(), { method: 'POST', body: new URLSearchParams({ xsrf: form[2]!, logout: 'yes' }) })
  expect(confirmed.status).toBeGreaterThanOrEqual(300)
  return new URL(confirmed.headers.get('location')!, page.url)
}

/**
 * A browser's cookie jar and navigation, without a browser: follows redirects by hand, keeping each host's
 * cookies (name=value, by host; enough for these flows, which set them on `/` or a path below the one asked).
 * `app` answers the requests to `appOrigin` (the app in-process, or a worker); anything else goes over the network.
 */
export function browserAgent(appOrigin: string, app: (request: Request) => Promise<Response>) {
  const jar = new Map<string, Map<string, string>>()
  const cookiesOf = (host: string) => jar.get(host) ?? jar.set(host, new Map()).get(host)!
  async function send(url: string, init: { method?: string; body?: URLSearchParams } = {}): Promise<Response> {
    const target = new URL(url)
    const cookies = [...cookiesOf(target.host)].map(([k, v]) => `${k}=${v}`).join('; ')
    const headers = new Headers(cookies ? { cookie: cookies } : {})
    if (init.body) headers.set('content-type', 'application/x-www-form-urlencoded')
    const request = new Request(url, { method: init.method ?? 'GET', headers, body: init.body?.toString(), redirect: 'manual' })
    const response = target.origin === appOrigin ? await app(request) : await fetch(request)
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1).trim()
      const expired = /max-age=0/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line) || value === ''
      if (expired) cookiesOf(target.host).delete(name)
      else cookiesOf(target.host).set(name, value)
    }
    return response
  }
  return {
    send,
    /** Follows redirects from `url` until a page answers without one (or one leads to `stopAt`'s origin and path); the last response and its URL. */
    async follow(url: string, init: { method?: string; body?: URLSearchParams } = {}, stopAt?: (url: URL) => boolean) {
      let current = url
      let response = await send(current, init)
      for (let hops = 0; response.status >= 300 && response.status < 400 && hops < 20; hops++) {
        current = new URL(response.headers.get('location')!, current).toString()
        if (stopAt?.(new URL(current))) return { response, url: current }
        response = await send(current)
      }
      return { response, url: current }
    },
    cookie: (host: string, name: string) => jar.get(host)?.get(name),
    setCookie: (host: string, name: string, value: string) => void cookiesOf(host).set(name, value),
  }
}
