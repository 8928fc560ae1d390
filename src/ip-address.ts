/**
 * IPv4 and IPv6 addresses as ipaddr.js 2.2 reads, matches, names and writes them, for the parts Flagpost uses (client
 * addresses, IN_CIDR and remoteAddress, webhook targets): the same lenient forms (`0x7f.1`, `010.0.0.1`, a bare
 * number, IPv4-embedded IPv6, zone ids), the same special ranges, the same text (RFC 5952). Written here because the
 * library's unused parts weighed on the worker bundle; test/ip-address.test.ts compares the two on many inputs.
 */
const V4_PART = '(0?\\d+|0x[a-f0-9]+)'
const V4 = [4, 3, 2, 1].map((n) => new RegExp(`^${Array(n).fill(V4_PART).join('\\.')}$`, 'i'))
const ZONE = '%[0-9a-z]{1,}'
const V6_PART = '(?:[0-9a-f]+::?)+'
const V6_NATIVE = new RegExp(`^(::)?(${V6_PART})?([0-9a-f]+)?(::)?(${ZONE})?$`, 'i')
const V6_DEPRECATED = new RegExp(`^(?:::)(${V4_PART}\\.${V4_PART}\\.${V4_PART}\\.${V4_PART}(${ZONE})?)$`, 'i')
const V6_TRANSITIONAL = new RegExp(`^((?:${V6_PART})|(?:::)(?:${V6_PART})?)${V4_PART}\\.${V4_PART}\\.${V4_PART}\\.${V4_PART}(${ZONE})?$`, 'i')

function parseIntAuto(text: string): number {
  if (/^0x[a-f0-9]+$/i.test(text)) return parseInt(text, 16)
  if (text[0] === '0' && !isNaN(parseInt(text[1]!, 10))) {
    if (/^0[0-7]+$/.test(text)) return parseInt(text, 8)
    throw new Error(`ipaddr: cannot parse ${text} as octal`)
  }
  return parseInt(text, 10)
}

/** The `bits` first bits of two addresses' parts (of `size` bits each) are equal. */
function matchCidr(a: number[], b: number[], size: number, bits: number): boolean {
  for (let part = 0; bits > 0; part++, bits -= size) {
    const shift = Math.max(size - bits, 0)
    if (a[part]! >> shift !== b[part]! >> shift) return false
  }
  return true
}

type Ranges<T> = [name: string, networks: [T, number][]][]

/** The first of `ranges` that holds `address` (ipaddr's subnetMatch), else `unicast`. */
function rangeOf<T extends IPv4 | IPv6>(address: T, ranges: Ranges<T>): string {
  for (const [name, networks] of ranges) for (const [network, bits] of networks) if (address.match(network, bits)) return name
  return 'unicast'
}

export class IPv4 {
  constructor(readonly octets: number[]) {
    if (octets.length !== 4) throw new Error('ipaddr: ipv4 octet count should be 4')
    for (const octet of octets) if (!(octet >= 0 && octet <= 255)) throw new Error('ipaddr: ipv4 octet should fit in 8 bits')
  }
  kind(): 'ipv4' {
    return 'ipv4'
  }
  match(other: IPv4 | IPv6, bits: number): boolean {
    if (!(other instanceof IPv4)) throw new Error('ipaddr: cannot match ipv4 address with non-ipv4 one')
    return matchCidr(this.octets, other.octets, 8, bits)
  }
  range(): string {
    return rangeOf<IPv4>(this, V4_RANGES)
  }
  toString(): string {
    return this.octets.join('.')
  }

  static parser(text: string): number[] | null {
    let m = V4[0]!.exec(text)
    if (m) return m.slice(1, 5).map(parseIntAuto)
    // As ipaddr: one number is the whole address; with two or three parts, the last fills the rest.
    for (const [n, max] of [[1, 0xffffffff], [2, 0xffffff], [3, 0xffff]] as const) {
      m = V4[4 - n]!.exec(text)
      if (!m) continue
      const value = parseIntAuto(m[n]!)
      if (value > max || value < 0) throw new Error('ipaddr: address outside defined range')
      const head = m.slice(1, n).map(parseIntAuto)
      const tail = [(value >>> 24) & 0xff, (value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff]
      return [...head, ...tail.slice(n - 1)]
    }
    return null
  }
  static parse(text: string): IPv4 {
    const octets = IPv4.parser(text)
    if (octets === null) throw new Error('ipaddr: string is not formatted like an IPv4 Address')
    return new IPv4(octets)
  }
  static isValid(text: string): boolean {
    return succeeds(() => IPv4.parse(text))
  }
}

function expandIPv6(text: string, count: number): { parts: number[]; zoneId: string | undefined } | null {
  if (text.indexOf('::') !== text.lastIndexOf('::')) return null
  let zoneId = text.match(new RegExp(ZONE, 'i'))?.[0]
  if (zoneId) {
    zoneId = zoneId.substring(1)
    text = text.replace(/%.+$/, '')
  }
  let colons = text.split(':').length - 1
  if (text.startsWith('::')) colons--
  if (text.endsWith('::')) colons--
  if (colons > count) return null
  text = text.replace('::', `:${'0:'.repeat(count - colons)}`)
  if (text[0] === ':') text = text.slice(1)
  if (text[text.length - 1] === ':') text = text.slice(0, -1)
  return { parts: text.split(':').map((p) => parseInt(p, 16)), zoneId }
}

export class IPv6 {
  readonly zoneId: string | undefined
  constructor(
    readonly parts: number[],
    zoneId?: string,
  ) {
    if (parts.length !== 8) throw new Error('ipaddr: ipv6 part count should be 8 or 16')
    for (const part of parts) if (!(part >= 0 && part <= 0xffff)) throw new Error('ipaddr: ipv6 part should fit in 16 bits')
    this.zoneId = zoneId || undefined
  }
  kind(): 'ipv6' {
    return 'ipv6'
  }
  match(other: IPv4 | IPv6, bits: number): boolean {
    if (!(other instanceof IPv6)) throw new Error('ipaddr: cannot match ipv6 address with non-ipv6 one')
    return matchCidr(this.parts, other.parts, 16, bits)
  }
  range(): string {
    return rangeOf<IPv6>(this, V6_RANGES)
  }
  isIPv4MappedAddress(): boolean {
    return this.range() === 'ipv4Mapped'
  }
  toIPv4Address(): IPv4 {
    if (!this.isIPv4MappedAddress()) throw new Error('ipaddr: trying to convert a generic ipv6 address to ipv4')
    const [high, low] = this.parts.slice(-2) as [number, number]
    return new IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])
  }
  /** RFC 5952's text: the longest run of two or more zero groups (the first of equals) as `::`, and the zone id. */
  toString(): string {
    const full = this.parts.map((p) => p.toString(16)).join(':') + (this.zoneId ? `%${this.zoneId}` : '')
    let best: RegExpExecArray | undefined
    for (const m of full.matchAll(/((^|:)(0(:|$)){2,})/g)) if (!best || m[0].length > best[0].length) best = m as RegExpExecArray
    return best ? `${full.slice(0, best.index)}::${full.slice(best.index + best[0].length)}` : full
  }

  static parser(text: string): { parts: number[] | null; zoneId?: string } | null {
    const deprecated = V6_DEPRECATED.exec(text)
    if (deprecated) return IPv6.parser(`::ffff:${deprecated[1]}`)
    if (V6_NATIVE.test(text)) return expandIPv6(text, 8) as { parts: number[] | null } | null
    const m = V6_TRANSITIONAL.exec(text)
    if (!m) return null
    const head = m[1]!.endsWith('::') ? m[1]! : m[1]!.slice(0, -1)
    const address = expandIPv6(head + (m[6] || ''), 6)
    if (!address) return null
    const octets = [m[2], m[3], m[4], m[5]].map((o) => parseInt(o!))
    if (octets.some((o) => !(o >= 0 && o <= 255))) return null
    address.parts.push((octets[0]! << 8) | octets[1]!, (octets[2]! << 8) | octets[3]!)
    return address
  }
  static parse(text: string): IPv6 {
    const address = IPv6.parser(text)
    // As ipaddr: text it cannot read fails here with a TypeError (it reads `parts` of null).
    if (address!.parts === null) throw new Error('ipaddr: string is not formatted like an IPv6 Address')
    return new IPv6(address!.parts, address!.zoneId)
  }
  static isValid(text: string): boolean {
    return text.includes(':') && succeeds(() => IPv6.parse(text))
  }
}

function succeeds(read: () => unknown): boolean {
  try {
    read()
    return true
  } catch {
    return false
  }
}

const v4 = (text: string, bits: number): [IPv4, number] => [IPv4.parse(text), bits]
const v6 = (text: string, bits: number): [IPv6, number] => [IPv6.parse(text), bits]

// ipaddr.js 2.2's special ranges, in its order (the first that holds an address names it).
const V4_RANGES: Ranges<IPv4> = [
  ['unspecified', [v4('0.0.0.0', 8)]],
  ['broadcast', [v4('255.255.255.255', 32)]],
  ['multicast', [v4('224.0.0.0', 4)]],
  ['linkLocal', [v4('169.254.0.0', 16)]],
  ['loopback', [v4('127.0.0.0', 8)]],
  ['carrierGradeNat', [v4('100.64.0.0', 10)]],
  ['private', [v4('10.0.0.0', 8), v4('172.16.0.0', 12), v4('192.168.0.0', 16)]],
  ['reserved', [v4('192.0.0.0', 24), v4('192.0.2.0', 24), v4('192.88.99.0', 24), v4('198.18.0.0', 15), v4('198.51.100.0', 24), v4('203.0.113.0', 24), v4('240.0.0.0', 4)]],
  ['as112', [v4('192.175.48.0', 24), v4('192.31.196.0', 24)]],
  ['amt', [v4('192.52.193.0', 24)]],
]
const V6_RANGES: Ranges<IPv6> = [
  ['unspecified', [v6('::', 128)]],
  ['linkLocal', [v6('fe80::', 10)]],
  ['multicast', [v6('ff00::', 8)]],
  ['loopback', [v6('::1', 128)]],
  ['uniqueLocal', [v6('fc00::', 7)]],
  ['ipv4Mapped', [v6('::ffff:0:0', 96)]],
  ['discard', [v6('100::', 64)]],
  ['rfc6145', [v6('::ffff:0:0:0', 96)]],
  ['rfc6052', [v6('64:ff9b::', 96)]],
  ['6to4', [v6('2002::', 16)]],
  ['teredo', [v6('2001::', 32)]],
  ['benchmarking', [v6('2001:2::', 48)]],
  ['amt', [v6('2001:3::', 32)]],
  ['as112v6', [v6('2001:4:112::', 48), v6('2620:4f:8000::', 48)]],
  ['deprecated', [v6('2001:10::', 28)]],
  ['orchid2', [v6('2001:20::', 28)]],
  ['droneRemoteIdProtocolEntityTags', [v6('2001:30::', 28)]],
  ['reserved', [v6('2001::', 23), v6('2001:db8::', 32)]],
]

/** An IPv6 address (tried first, as ipaddr) or an IPv4 one, in any form ipaddr.js reads. */
export const isValid = (text: string): boolean => IPv6.isValid(text) || IPv4.isValid(text)

/** An address with a prefix length (`/n`, at most 128 for IPv6, 32 for IPv4). */
export function isValidCIDR(text: string): boolean {
  const m = text.match(/^(.+)\/(\d+)$/)
  if (!m) return false
  const bits = parseInt(m[2]!)
  return (text.includes(':') && bits <= 128 && succeeds(() => IPv6.parse(m[1]!))) || (bits <= 32 && succeeds(() => IPv4.parse(m[1]!)))
}

export function parse(text: string): IPv4 | IPv6 {
  if (IPv6.isValid(text)) return IPv6.parse(text)
  if (IPv4.isValid(text)) return IPv4.parse(text)
  throw new Error('ipaddr: the address has neither IPv6 nor IPv4 format')
}

/** The address, an IPv4-mapped IPv6 one as its IPv4 address. */
export function process(text: string): IPv4 | IPv6 {
  const address = parse(text)
  return address instanceof IPv6 && address.isIPv4MappedAddress() ? address.toIPv4Address() : address
}
