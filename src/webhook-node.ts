import { lookup } from 'node:dns/promises'
import { request as httpRequest, type RequestOptions } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'
import { DeliveryRefused, type WebhookSend } from './integrations/delivery.js'

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
export function nodeWebhookSend(resolve: Resolve = systemResolve): WebhookSend {
  return async ({ url, headers, body, timeoutMs, allowPrivateTargets }) => {
    const target = new URL(url)
    const host = target.hostname.replace(/^\[|\]$/g, '')
    const signal = AbortSignal.timeout(timeoutMs)
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
    const pin: LookupFunction = (_hostname, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as (err: null, addresses: { address: string; family: number }[]) => void)(null, [pinned])
      else callback(null, pinned.address, pinned.family)
    }
    const options: RequestOptions = { method: 'POST', headers: Object.fromEntries(headers), lookup: pin, signal }
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
