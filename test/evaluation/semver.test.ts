import { describe, expect, it } from 'vitest'
import semverParse from 'semver/functions/parse.js'
import semverCoerce from 'semver/functions/coerce.js'
import semverCompare from 'semver/functions/compare.js'
import { coerceVersion, compareVersions, parseVersion } from '../../src/evaluation/semver.js'

/* src/evaluation/semver.ts against node-semver, which Unleash and its SDKs use: the same answers on edge cases. */

const TEXTS = [
  '1.2.3', ' 1.2.3 ', 'v1.2.3', '=1.2.3', '01.2.3', '1.02.3', '1.2', '1', '1.2.3.4', '0.0.0', '1.2.3-alpha', '1.2.3-alpha.1', '1.2.3-alpha.01',
  '1.2.3-0', '1.2.3-00', '1.2.3-1a', '1.2.3-a-b.c', '1.2.3-', '1.2.3+build', '1.2.3+build.1', '1.2.3-rc.1+build.5', '1.2.3+', '1.2.3-rc..1',
  '9007199254740992.0.0', '9007199254740991.0.0', '1.2.3-9007199254740992', `1.2.3-${'a'.repeat(250)}`, `1.2.3-${'a'.repeat(251)}`, '', 'x.y.z', '1.2.3 4',
  '1.0.0-beta.11', '1.0.0-beta.2', '1.0.0-rc.1', '1.0.0', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-alpha', '1.0.0-alpha.1', '2.0.0', '1.10.0', '1.9.9',
]
const COERCED = ['unleash-client-node:4.2.0', 'spec 4.1', '5', 'v10.20.30.40', 'a1b', '04.2.0', '12345678901234567.1.1', 'none', '1.2.3-beta']

const shape = (v: ReturnType<typeof semverParse>) => (v ? { major: v.major, minor: v.minor, patch: v.patch, prerelease: v.prerelease } : null)

describe('semantic versions', () => {
  it('parses as node-semver parses', () => {
    for (const text of TEXTS) expect(parseVersion(text), text).toEqual(shape(semverParse(text)))
  })

  it('coerces as node-semver coerces', () => {
    for (const text of COERCED) expect(coerceVersion(text), text).toEqual(shape(semverCoerce(text)))
  })

  it('orders as node-semver orders, pre-releases included', () => {
    const valid = TEXTS.filter((t) => semverParse(t) !== null)
    for (const a of valid) for (const b of valid) expect(compareVersions(parseVersion(a)!, parseVersion(b)!), `${a} vs ${b}`).toBe(semverCompare(a, b))
  })
})
