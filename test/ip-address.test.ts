import ipaddr from 'ipaddr.js'
import { describe, expect, it } from 'vitest'
import * as own from '../src/ip-address.js'

/*
 * src/ip-address.ts against ipaddr.js 2.2, which it replaced (kept as a devDependency for this comparison): the
 * same texts valid, as addresses and as CIDR ranges, read as the same kind, parts, range and text, matched alike.
 */

let seed = 42
const random = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31
  return seed % n
}
const pick = <T>(list: readonly T[]) => list[random(list.length)]!

const V4_PARTS = ['0', '1', '10', '127', '255', '256', '08', '010', '0x10', '0xff', '0x100', '00', '4294967295', '4294967296', '16777215', '65535', '65536', '1e3', '-1', '', ' 1', '0X1F', '0777']
const V6_GROUPS = ['0', '1', 'ffff', 'FFFF', 'fe80', '2001', 'db8', '2002', '64', 'ff9b', '10000', 'g', '', '0000', '00000', 'ff00', 'fc00', '100', '112', '4f']
const ZONES = ['', '%eth0', '%1', '%', '%en-0', '%ZONE']

function v4Text(): string {
  return Array.from({ length: 1 + random(5) }, () => pick(V4_PARTS)).join('.')
}
function v6Text(): string {
  const groups = Array.from({ length: 1 + random(9) }, () => pick(V6_GROUPS))
  if (random(3) === 0) groups.splice(random(groups.length + 1), 0, '')
  if (random(4) === 0) groups.splice(random(groups.length + 1), 0, '', '')
  let text = groups.join(':')
  if (random(4) === 0) text = `${text}:${v4Text()}`
  if (random(6) === 0) text = `::${v4Text()}`
  if (random(6) === 0) text = `::ffff:${v4Text()}`
  return text + pick(ZONES)
}

const FIXED = [
  '::', '::1', '1::', '::ffff:1.2.3.4', '::ffff:102:304', '::1.2.3.4', '2001:db8::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2002:c000:204::1',
  'fe80::1%eth0', 'fe80::1%25eth0', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8:9', '1::2::3', ':::', '1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:7:1.2.3.4',
  '::ffff:0:0:1', '64:ff9b::1.2.3.4', '100::1', 'ff02::1', 'fc00::1', 'fd12:3456::1', '2001:2::1', '2001:3::1', '2001:4:112::1', '2620:4f:8000::1',
  '2001:10::1', '2001:20::1', '2001:30::1', '2001:1ff::1', '1.2.3.4', '0.0.0.0', '255.255.255.255', '224.0.0.1', '169.254.1.1', '127.0.0.1',
  '100.64.0.1', '10.0.0.1', '172.16.0.1', '172.32.0.1', '192.168.1.1', '192.0.0.1', '192.0.2.1', '192.88.99.1', '198.18.0.1', '198.51.100.1',
  '203.0.113.1', '240.0.0.1', '192.175.48.1', '192.31.196.1', '192.52.193.1', '8.8.8.8', '0x7f.1', '010.0.0.1', '3232235777', '1.2.3', '1.2',
  '0:0:0:0:0:0:0:0', '0:0:1:0:0:1:0:0', '1:0:0:1:0:0:0:1', 'a:0:0:b:0:0:c:d', '::ffff:255.255.255.255', '::ffff:256.0.0.0', 'hello', '', ':', '1.2.3.4.5',
]

function describeOwn(text: string) {
  if (!own.isValid(text)) return { valid: false, cidr: own.isValidCIDR(text) }
  const address = own.parse(text)
  const processed = own.process(text)
  const v6 = address instanceof own.IPv6
  return {
    valid: true,
    cidr: own.isValidCIDR(text),
    kind: address.kind(),
    text: address.toString(),
    range: address.range(),
    processed: processed.toString(),
    v6: own.IPv6.isValid(text),
    v4: own.IPv4.isValid(text),
    mapped: v6 ? (address as own.IPv6).isIPv4MappedAddress() : undefined,
  }
}
function describeLibrary(text: string) {
  if (!ipaddr.isValid(text)) return { valid: false, cidr: ipaddr.isValidCIDR(text) }
  const address = ipaddr.parse(text)
  const processed = ipaddr.process(text)
  const v6 = address.kind() === 'ipv6'
  return {
    valid: true,
    cidr: ipaddr.isValidCIDR(text),
    kind: address.kind(),
    text: address.toString(),
    range: address.range(),
    processed: processed.toString(),
    v6: ipaddr.IPv6.isValid(text),
    v4: ipaddr.IPv4.isValid(text),
    mapped: v6 ? (address as ipaddr.IPv6).isIPv4MappedAddress() : undefined,
  }
}

describe('own IP addresses compared with ipaddr.js', () => {
  it('read the same texts alike (addresses, CIDR ranges, kinds, ranges, text)', () => {
    const texts = [...FIXED, ...FIXED.map((t) => `${t}/24`), ...FIXED.map((t) => `${t}/120`)]
    for (let i = 0; i < 20000; i++) texts.push(v4Text(), v6Text())
    for (let i = 0; i < 3000; i++) texts.push(`${random(2) ? v4Text() : v6Text()}/${pick(['0', '8', '32', '33', '64', '128', '129', '', '08', 'x'])}`)
    let valid = 0
    for (const text of texts) {
      const expected = describeLibrary(text)
      expect(describeOwn(text), text).toEqual(expected)
      if (expected.valid) valid++
    }
    expect(valid).toBeGreaterThan(4000)
  })

  it('match addresses against networks alike, every prefix length', () => {
    const v4 = ['1.2.3.4', '1.2.255.4', '10.0.0.1', '255.255.255.255', '0.0.0.0', '192.168.7.200']
    const v6 = ['2001:db8::1', '2001:db8:ffff::1', 'fe80::1', '::', 'ffff::ffff', '2001:db8:0:1::', '::ffff:1.2.3.4']
    for (const [family, bitsMax] of [[v4, 32], [v6, 128]] as const) {
      for (const a of family) for (const b of family) for (let bits = 0; bits <= bitsMax; bits++) {
        expect(own.parse(a).match(own.parse(b), bits), `${a} ${b}/${bits}`).toBe(ipaddr.parse(a).match(ipaddr.parse(b) as never, bits))
      }
    }
    expect(() => own.parse('1.2.3.4').match(own.parse('::1'), 0)).toThrow()
  })
})
