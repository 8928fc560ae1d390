import * as ipaddr from '../ip-address.js'
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

/** The most proxies FLAGPOST_TRUST_PROXY may count: more is a typo (or "trust everything"), refused at start. */
export const MAX_TRUSTED_HOPS = 32

const IPV4_STRICT = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/

/**
 * An address written strictly: IPv4 as four dotted decimal parts only (not `1.5`, `0x10`, `010.0.0.1` or a bare
 * number, which ipaddr.js would also read), IPv6 in its usual text without a zone; undefined otherwise.
 */
function strictAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (IPV4_STRICT.test(text)) return ipaddr.IPv4.parse(text)
  if (text.includes(':') && !text.includes('%') && ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text)
  return undefined
}

/** An address or CIDR network written strictly; an IPv4-mapped IPv6 network (::ffff:10.0.0.0/104) as the IPv4 one it covers. */
function strictNetwork(text: string): [ipaddr.IPv4 | ipaddr.IPv6, number] | undefined {
  const [addressText, bitsText, ...rest] = text.split('/')
  if (rest.length > 0) return undefined
  const address = strictAddress(addressText!)
  if (!address) return undefined
  const max = address.kind() === 'ipv4' ? 32 : 128
  if (bitsText !== undefined && !/^\d{1,3}$/.test(bitsText)) return undefined
  const bits = bitsText === undefined ? max : Number(bitsText)
  if (bits > max) return undefined
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress()) {
    // The part of the network inside ::ffff:0:0/96 is an IPv4 network; a wider one also covers other IPv6 addresses.
    if (bits >= 96) return [address.toIPv4Address(), bits - 96]
  }
  return [address, bits]
}

/**
 * FLAGPOST_TRUST_PROXY: unset, empty or `false`: trust no forwarding header (the socket's peer is the client); a whole
 * number from 0 to MAX_TRUSTED_HOPS: that many proxies in front (Express's `trust proxy` hops: 1 means the socket's
 * peer is a proxy and the right-most X-Forwarded-For entry is the client); otherwise a comma-separated list of proxy
 * addresses and CIDR networks, written strictly (IPv4 as four dotted decimal parts, IPv6 without a zone), and the
 * names loopback, linklocal and uniquelocal. Anything else is refused at start, with the reason.
 */
export function parseTrustProxy(value: string | undefined): TrustProxy {
  const text = value?.trim() ?? ''
  if (text === '' || text === 'false') return TRUST_NONE
  if (/^\d+$/.test(text)) {
    const hops = Number(text)
    if (text.length > 2 || hops > MAX_TRUSTED_HOPS) throw new Error(`FLAGPOST_TRUST_PROXY as a number of proxies must be from 0 to ${MAX_TRUSTED_HOPS}, got "${text}"`)
    return { hops }
  }
  const networks: [ipaddr.IPv4 | ipaddr.IPv6, number][] = []
  for (const item of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    for (const entry of NAMED_NETWORKS[item] ?? [item]) {
      const network = strictNetwork(entry)
      if (!network) {
        throw new Error(
          `FLAGPOST_TRUST_PROXY must be a number of proxies (0 to ${MAX_TRUSTED_HOPS}) or a comma-separated list of proxy addresses (IPv4 as four dotted decimal parts), CIDR networks, loopback, linklocal or uniquelocal; "${item}" is none of them`,
        )
      }
      networks.push(network)
    }
  }
  return { networks }
}

/** The address in its canonical text (IPv4 peers of a dual-stack socket, ::ffff:a.b.c.d, as a.b.c.d; an IPv6 zone id dropped); undefined when it is none. */
export function canonicalAddress(text: string | undefined): string | undefined {
  const trimmed = text?.trim().replace(/%[^%]*$/, '')
  if (!trimmed || !ipaddr.isValid(trimmed)) return undefined
  return ipaddr.process(trimmed).toString()
}

/** The longest X-Forwarded-For entry taken as it is when it is no address. */
const MAX_ENTRY_LENGTH = 100

/**
 * One X-Forwarded-For entry: an address, also with a port (`1.2.3.4:5555`, `[::1]:80`, `[::1]`) or an IPv6 zone id,
 * in its canonical text. An entry that is none of them is taken as it is (as Express's proxy-addr does), trimmed and
 * cut to MAX_ENTRY_LENGTH: a trusted proxy wrote it, so it is the client as that proxy knows it; it is never a
 * trusted proxy, so the walk ends there. Undefined for an empty entry.
 */
function forwardedEntry(entry: string): { address: string; parsed: boolean } | undefined {
  const text = entry.trim()
  if (text === '') return undefined
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text)
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(text)
  const address = canonicalAddress(bracketed?.[1] ?? withPort?.[1] ?? text)
  return address === undefined ? { address: text.slice(0, MAX_ENTRY_LENGTH), parsed: false } : { address, parsed: true }
}

function trusted(trust: TrustProxy, address: string, index: number): boolean {
  if ('hops' in trust) return index < trust.hops
  if (!ipaddr.isValid(address)) return false
  const parsed = ipaddr.process(address)
  return trust.networks.some(([network, bits]) => parsed.kind() === network.kind() && parsed.match(network, bits))
}

/**
 * The client's address on Node: from the socket's peer (@hono/node-server passes the incoming request as a binding;
 * read without importing Node modules) leftwards through X-Forwarded-For while the address reached is a trusted proxy.
 * Entries are read with their ports and zone ids (forwardedEntry); an entry that is no address is the client as it is.
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
      const next = forwardedEntry(entry)
      if (next === undefined) break
      client = next.address
      if (!next.parsed) break
    }
    return client
  }
}

/** The client's address on Workers: CF-Connecting-IP, set by Cloudflare (it replaces any the client sent). */
export const cloudflareClientAddress: ClientAddress = (c) => canonicalAddress(c.req.header('cf-connecting-ip'))

/** The request's client address, as the app's home says (createApp sets `clientAddress` on every request). */
export function clientAddressOf(c: Context): string | undefined {
  // c.get, not c.var: c.var copies every variable of the request into a new object on each read.
  const resolve = (c.get as (key: string) => ClientAddress | undefined)('clientAddress')
  return resolve?.(c)
}

/** The IPv4 address in these two 16-bit parts. */
const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`

/**
 * The key of an address in every per-address limit (sign-in and its lockout, single sign-on legs, invite links,
 * signals, SDK streams): an IPv4 address as it is, an IPv6 address by its /64 network (`2001:db8:1:2::/64`), since
 * one client usually holds a whole /64 and could rotate through it. Addresses that carry an IPv4 address count as
 * that IPv4 address, or their holder would rotate through 2^80 keys: IPv4-mapped (::ffff:a.b.c.d), 6to4
 * (2002:aabb:ccdd::/48, the relay's client a.b.c.d) and Teredo (2001:0::/32, the client's public address in the
 * last 32 bits, inverted). What is recorded or evaluated (SDK metrics' client_ip, the frontend API's remoteAddress)
 * stays the full address. Anything else (an unparsed forwarded entry) as it is.
 */
export function limitKey(address: string): string {
  if (!address.includes(':') || !ipaddr.IPv6.isValid(address)) return address
  const parsed = ipaddr.process(address)
  if (parsed.kind() === 'ipv4') return parsed.toString()
  const parts = (parsed as ipaddr.IPv6).parts
  if (parts[0] === 0x2002) return ipv4Of(parts[1]!, parts[2]!)
  if (parts[0] === 0x2001 && parts[1] === 0) return ipv4Of(parts[6]! ^ 0xffff, parts[7]! ^ 0xffff)
  return `${ipaddr.IPv6.parse(`${parts.slice(0, 4).map((p) => p.toString(16)).join(':')}::`).toString()}/64`
}

/**
 * How many times a limit's allowance the /48 around a /64 gets (NETWORK_ALLOWANCE): a site usually holds a /48, that
 * is 65,536 /64s to rotate through, so every per-address limit also counts the /48 as one, with this larger
 * allowance (many clients of one site share it). A /32 is never counted as one: one /48 cannot lock out its neighbours.
 */
export const NETWORK_ALLOWANCE = 16

/** The coarser key of a native IPv6 address (its /48, `2001:db8:1::/48`) in every per-address limit; undefined for the rest. */
export function networkLimitKey(address: string): string | undefined {
  const key = limitKey(address)
  if (!key.endsWith('/64')) return undefined
  const parts = ipaddr.IPv6.parse(key.slice(0, -3)).parts
  return `${ipaddr.IPv6.parse(`${parts.slice(0, 3).map((p) => p.toString(16)).join(':')}::`).toString()}/48`
}

/**
 * The keys a request counts under in a per-address limit of `allowance`: its limitKey with the allowance, and for a
 * native IPv6 address also its /48 with NETWORK_ALLOWANCE times it. An unknown address: none.
 */
export function limitKeysOf(c: Context, allowance: number): [string, number][] {
  const address = clientAddressOf(c)
  if (address === undefined) return []
  const network = networkLimitKey(address)
  return network === undefined ? [[limitKey(address), allowance]] : [[limitKey(address), allowance], [network, allowance * NETWORK_ALLOWANCE]]
}

/** The request's key in per-address limits (limitKey of clientAddressOf); undefined when the address is unknown. */
export function limitKeyOf(c: Context): string | undefined {
  const address = clientAddressOf(c)
  return address === undefined ? undefined : limitKey(address)
}
