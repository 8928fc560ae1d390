import { describe, expect, it } from 'vitest'
import { neonBranchName, previewAlias, workerName } from '../../scripts/branch-names.js'

// Wrangler's own rule for a preview alias, and the DNS label limit of <alias>-<worker>.
const VALID_ALIAS = /^[a-z](?:[a-z0-9-]*[a-z0-9])?$/
const worker = workerName()

describe('preview names for git branches', () => {
  it('keeps a simple branch name as it is', () => {
    expect(previewAlias('feature-login', worker)).toBe('feature-login')
    expect(neonBranchName('feature-login', worker)).toBe('preview/feature-login')
  })

  it.each([
    'feature/Login_Page',
    'fix/#123 crash on save!',
    '123-starts-with-a-digit',
    '-leading-and-trailing-',
    'dependabot/npm_and_yarn/hono-4.13.19',
    'ÄÖÜ/ümlaut',
    '////',
    'x'.repeat(300),
    `${'a'.repeat(60)}/${'b'.repeat(60)}`,
    'UPPER',
  ])('turns %s into a valid alias that fits one DNS label', (branch) => {
    const alias = previewAlias(branch, worker)
    expect(alias).toMatch(VALID_ALIAS)
    expect(`${alias}-${worker}`.length).toBeLessThanOrEqual(63)
    expect(neonBranchName(branch, worker)).toBe(`preview/${alias}`)
  })

  it('never gives two branches the same alias when it had to change or cut them', () => {
    const branches = ['feature/a', 'feature-a', 'Feature-A', `${'x'.repeat(80)}1`, `${'x'.repeat(80)}2`, 'a_b', 'a.b']
    const aliases = branches.map((b) => previewAlias(b, worker))
    expect(new Set(aliases).size).toBe(branches.length)
  })

  it('is stable for a branch', () => {
    expect(previewAlias('feature/Login', worker)).toBe(previewAlias('feature/Login', worker))
  })

  it('refuses an empty branch name', () => {
    expect(() => previewAlias('  ', worker)).toThrow()
  })
})
