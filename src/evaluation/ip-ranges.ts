import * as ipaddr from '../ip-address.js'

/** Matches an address against a list of addresses and CIDR ranges, parsed once. */
export interface AddressMatcher {
  matches(address: string): boolean
  /** The entries a miss compares against (IPv6 ranges count 8: one per 16-bit group), the work the meter charges. */
  readonly size: number
}

const FOUR_PART_DECIMAL = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})$/

/** A dotted-quad IPv4 address as an unsigned 32-bit number, or -1. Hand-parsed: it runs per evaluation. */
function ipv4Number(address: string): number {
  const m = FOUR_PART_DECIMAL.exec(address)
  if (!m) return -1
  let value = 0
  for (let i = 1; i <= 4; i++) {
    const octet = Number(m[i])
    if (octet > 255) return -1
    value = value * 256 + octet
  }
  return value
}

interface Ipv6Range {
  address: ipaddr.IPv6
  bits: number
}

function parseIpv6(address: string): ipaddr.IPv6 | undefined {
  return address.includes(':') && ipaddr.IPv6.isValid(address) ? ipaddr.IPv6.parse(address) : undefined
}

/**
 * Entries are IPv4/IPv6 addresses or CIDR ranges; entries that are neither are ignored, as the SDKs do.
 * An address matches an entry of its own family only (no IPv4-mapped IPv6 conversion), as the Node SDK's IN_CIDR.
 * `ipv4Only`: IPv6 entries are ignored (remoteAddressMatcher).
 */
export function addressMatcher(entries: readonly string[], ipv4Only = false): AddressMatcher {
  const exact = new Set<string>()
  const v4: number[] = [] // pairs: network, mask
  const v6: Ipv6Range[] = []
  for (const raw of entries) {
    const entry = raw.trim()
    if (entry === '') continue
    const slash = entry.indexOf('/')
    const host = slash === -1 ? entry : entry.slice(0, slash)
    const bitsText = slash === -1 ? undefined : entry.slice(slash + 1)
    if (bitsText !== undefined && !/^\d{1,3}$/.test(bitsText)) continue
    const bits = bitsText === undefined ? undefined : Number(bitsText)
    const address4 = ipv4Number(host)
    if (address4 !== -1) {
      if (bits !== undefined && bits > 32) continue
      const prefix = bits ?? 32
      const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0
      v4.push((address4 & mask) >>> 0, mask)
      exact.add(entry)
      continue
    }
    const address6 = ipv4Only ? undefined : parseIpv6(host)
    if (address6) {
      if (bits !== undefined && bits > 128) continue
      v6.push({ address: address6, bits: bits ?? 128 })
      exact.add(entry)
    }
  }
  return {
    size: v4.length / 2 + v6.length * 8,
    matches(address: string): boolean {
      if (exact.has(address)) return true
      const address4 = v4.length > 0 ? ipv4Number(address) : -1
      if (address4 !== -1) {
        for (let i = 0; i < v4.length; i += 2) if (((address4 & v4[i + 1]!) >>> 0) === v4[i]) return true
        return false
      }
      if (v6.length === 0) return false
      const address6 = parseIpv6(address)
      if (!address6) return false
      for (const range of v6) if (address6.match(range.address, range.bits)) return true
      return false
    },
  }
}

/**
 * The remoteAddress strategy's IPs as the Node SDK reads them: split at commas (with the spaces around them), an entry
 * equal to the address as text matches (whatever it is: an IPv6 address only so, never by range), and an IPv4 address
 * or CIDR range matches the IPv4 addresses in it.
 */
export function remoteAddressMatcher(ips: string | undefined): (address: string | undefined) => boolean {
  if (!ips) return () => false
  const entries = ips.split(/\s*,\s*/)
  const exact = new Set(entries)
  const v4 = addressMatcher(entries.filter((e) => e === e.trim()), true)
  return (address) => address !== undefined && (exact.has(address) || v4.matches(address))
}
