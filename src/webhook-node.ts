import { lookup } from 'node:dns/promises'
import { request as httpRequest, type RequestOptions } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { LookupFunction } from 'node:net'
import * as ipaddr from './ip-address.js'
import { Readable } from 'node:stream'
import { DeliveryRefused, type OutboundGet, type WebhookSend } from './integrations/delivery.js'

/** Resolves a host name to every address it has (the Node transport checks them all). */
export type Resolve = (host: string) => Promise<{ address: string; family: number }[]>

const systemResolve: Resolve = (host) => lookup(host, { all: true, verbatim: true })

function isPublic(address: string): boolean {
  let parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address()
  return parsed.range() === 'unicast'
}

/**
 * Webhook requests from Node: the host name is resolved once, every address it resolves to must be public
 * (unless private targets are allowed), and the connection goes to exactly the address checked (the socket's
 * look-up is pinned to it), so a name cannot point one way when checked and another when connected (DNS
 * rebinding). TLS still verifies the certificate against the host name. Redirects are not followed.
 */
/** The address a request to `target` goes to: every address of its host checked (unless private targets are allowed), the socket's look-up pinned to it. */
async function pinnedLookup(target: URL, allowPrivateTargets: boolean, resolve: Resolve): Promise<LookupFunction> {
  const host = target.hostname.replace(/^\[|\]$/g, '')
  let addresses: { address: string; family: number }[]
  if (ipaddr.isValid(host)) addresses = [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }]
  else {
    try {
      addresses = await resolve(host)
    } catch {
      throw new DeliveryRefused('the host name could not be resolved')
    }
  }
  if (addresses.length === 0) throw new DeliveryRefused('the host name could not be resolved')
  if (!allowPrivateTargets && !addresses.every((a) => isPublic(a.address))) {
    throw new DeliveryRefused('the host name resolves to a private address; set FLAGPOST_ALLOW_PRIVATE_WEBHOOKS=true to allow private targets')
  }
  const pinned = addresses[0]!
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (err: null, addresses: { address: string; family: number }[]) => void)(null, [pinned])
    else callback(null, pinned.address, pinned.family)
  }
}

/**
 * Webhook requests from Node: the host name is resolved once, every address it resolves to must be public
 * (unless private targets are allowed), and the connection goes to exactly the address checked (the socket's
 * look-up is pinned to it), so a name cannot point one way when checked and another when connected (DNS
 * rebinding). TLS still verifies the certificate against the host name. Redirects are not followed.
 */
export function nodeWebhookSend(resolve: Resolve = systemResolve): WebhookSend {
  return async ({ url, headers, body, timeoutMs, allowPrivateTargets }) => {
    const target = new URL(url)
    const signal = AbortSignal.timeout(timeoutMs)
    const options: RequestOptions = { method: 'POST', headers: Object.fromEntries(headers), lookup: await pinnedLookup(target, allowPrivateTargets, resolve), signal }
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest
    return new Promise<number>((resolveStatus, reject) => {
      const request = send(target, options, (response) => {
        response.resume()
        resolveStatus(response.statusCode ?? 0)
      })
      request.on('error', (error) => reject(signal.aborted ? Object.assign(new Error('timed out'), { name: 'TimeoutError' }) : error))
      request.end(body)
    })
  }
}

/** GETs from Node (the migration from Unleash), with the webhooks' address checks and pinning; the answer's body streamed. */
export function nodeGet(resolve: Resolve = systemResolve): OutboundGet {
  return async (url, { headers, timeoutMs, allowPrivateTargets }) => {
    const target = new URL(url)
    const signal = AbortSignal.timeout(timeoutMs)
    const options: RequestOptions = { method: 'GET', headers, lookup: await pinnedLookup(target, allowPrivateTargets, resolve), signal }
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest
    return new Promise<Response>((resolveResponse, reject) => {
      const request = send(target, options, (response) => {
        const status = response.statusCode ?? 502
        const body = status === 204 || status === 304 ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>)
        resolveResponse(new Response(body, { status: status < 200 || status > 599 ? 502 : status }))
      })
      request.on('error', (error) => reject(signal.aborted ? Object.assign(new Error('timed out'), { name: 'TimeoutError' }) : error))
      request.end()
    })
  }
}
