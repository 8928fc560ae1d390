import ipaddr from 'ipaddr.js'
import type { Context } from 'hono'

/**
 * The one answer to "which address is this client at", used by every per-address limit (sign-in, single sign-on legs,
 * invite links, signals, SDK streams) and by what records or evaluates the caller's address (SDK metrics' client_ip,
 * the frontend API's default remoteAddress). Each home gives createApp its own (AppDeps `clientAddress`):
 * - Node: the socket's peer; X-Forwarded-For only as far as FLAGPOST_TRUST_PROXY says (`socketClientAddress`).
 * - Workers: CF-Connecting-IP, which Cloudflare sets itself, replacing any the client sent (`cloudflareClientAddress`).
 * Undefined: the address is unknown (a test's `app.request`); limits then count such callers together or not at all.
 */
export type ClientAddress = (c: Context) => string | undefined

/** Whose X-Forwarded-For is believed: the first `hops` proxies in front, or the proxies at these addresses and networks. */
export type TrustProxy = { hops: number } | { networks: [ipaddr.IPv4 | ipaddr.IPv6, number][] }

export const TRUST_NONE: TrustProxy = { hops: 0 }

// Express's (proxy-addr's) names for the usual networks of proxies.
const NAMED_NETWORKS: Record<string, string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
}

/**
 * FLAGPOST_TRUST_PROXY: unset, empty or `false`: trust no forwarding header (the socket's peer is the client); a whole
 * number: that many proxies in front (Express's `trust proxy` hops: 1 means the socket's peer is a proxy and the
 * right-most X-Forwarded-For entry is the client); otherwise a comma-separated list of proxy addresses, CIDR networks
 * and the names loopback, linklocal and uniquelocal. Anything else is refused at start, with the reason.
 */
export function parseTrustProxy(value: string | undefined): TrustProxy {
  const text = value?.trim() ?? ''
  if (text === '' || text === 'false') return TRUST_NONE
  if (/^\d+$/.test(text)) return { hops: Number(text) }
  const networks: [ipaddr.IPv4 | ipaddr.IPv6, number][] = []
  for (const item of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    for (const entry of NAMED_NETWORKS[item] ?? [item]) {
      try {
        if (entry.includes('/')) networks.push(ipaddr.parseCIDR(entry))
        else {
          const address = ipaddr.process(entry)
          networks.push([address, address.kind() === 'ipv4' ? 32 : 128])
        }
      } catch {
        throw new Error(
          `FLAGPOST_TRUST_PROXY must be a number of proxies or a comma-separated list of proxy addresses, CIDR networks, loopback, linklocal or uniquelocal; "${item}" is none of them`,
        )
      }
    }
  }
  return { networks }
}

/** The address in its canonical text (IPv4 peers of a dual-stack socket, ::ffff:a.b.c.d, as a.b.c.d); undefined when it is none. */
export function canonicalAddress(text: string | undefined): string | undefined {
  const trimmed = text?.trim()
  if (!trimmed || !ipaddr.isValid(trimmed)) return undefined
  return ipaddr.process(trimmed).toString()
}

function trusted(trust: TrustProxy, address: string, index: number): boolean {
  if ('hops' in trust) return index < trust.hops
  const parsed = ipaddr.process(address)
  return trust.networks.some(([network, bits]) => parsed.kind() === network.kind() && parsed.match(network, bits))
}

/**
 * The client's address on Node: from the socket's peer (@hono/node-server passes the incoming request as a binding;
 * read without importing Node modules) leftwards through X-Forwarded-For while the address reached is a trusted proxy.
 * An entry that is no address stops the walk at the last one that was.
 */
export function socketClientAddress(trust: TrustProxy = TRUST_NONE): ClientAddress {
  return (c) => {
    const peer = canonicalAddress((c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress)
    if (peer === undefined) return undefined
    if ('hops' in trust && trust.hops === 0) return peer
    const forwarded = (c.req.header('x-forwarded-for') ?? '').split(',').reverse()
    let client = peer
    for (const [i, entry] of forwarded.entries()) {
      if (!trusted(trust, client, i)) break
      const next = canonicalAddress(entry)
      if (next === undefined) break
      client = next
    }
    return client
  }
}

/** The client's address on Workers: CF-Connecting-IP, set by Cloudflare (it replaces any the client sent). */
export const cloudflareClientAddress: ClientAddress = (c) => canonicalAddress(c.req.header('cf-connecting-ip'))

/** The request's client address, as the app's home says (createApp sets `clientAddress` on every request). */
export function clientAddressOf(c: Context): string | undefined {
  const resolve = (c.var as { clientAddress?: ClientAddress }).clientAddress
  return resolve?.(c)
}
