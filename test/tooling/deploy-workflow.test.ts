import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { previewWorkerName, workerName } from '../../scripts/branch-names.js'

interface Step {
  uses?: string
  run?: string
  with?: Record<string, string>
  env?: Record<string, string>
}
interface Job {
  if: string
  steps: Step[]
}

const workflow = parse(readFileSync('.github/workflows/deploy.yml', 'utf8')) as { on: Record<string, unknown>; jobs: Record<string, Job> }
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }
const runs = (job: Job) => job.steps.map((s) => s.run ?? '').join('\n')
const uses = (job: Job) => job.steps.map((s) => s.uses ?? '')

describe('the deploy workflow', () => {
  it('is valid YAML that runs on pushes to any branch and on branch deletion', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['delete', 'push'])
    expect(Object.keys(workflow.jobs).sort()).toEqual(['cleanup', 'preview', 'production'])
  })

  it('previews other branches: Neon branch, migration, Worker version under the preview alias', () => {
    const job = workflow.jobs.preview!
    expect(job.if).toContain("github.ref_name != 'main'")
    expect(uses(job).some((u) => u.startsWith('neondatabase/create-branch-action@'))).toBe(true)
    const script = runs(job)
    expect(script).toContain('scripts/branch-names.ts')
    expect(script).toContain('npm run db:migrate')
    expect(script).toMatch(/wrangler versions upload --env preview --preview-alias/)
    expect(script).toContain('--secrets-file')
    const order = ['create-branch-action', 'db:migrate', 'versions upload'].map((needle) => job.steps.findIndex((s) => `${s.uses ?? ''}${s.run ?? ''}`.includes(needle)))
    expect(order).toEqual([...order].sort((a, b) => a - b))
  })

  it('makes previews versions of a Worker of their own, on a database scrubbed before the upload', () => {
    const job = workflow.jobs.preview!
    const script = runs(job)
    expect(script).toMatch(/wrangler versions upload --env preview --preview-alias/)
    const order = ['db:migrate', 'scripts/scrub-preview.ts', 'versions upload'].map((needle) => job.steps.findIndex((s) => (s.run ?? '').includes(needle)))
    expect(order.every((i) => i >= 0)).toBe(true)
    expect(order).toEqual([...order].sort((a, b) => a - b))
    expect(previewWorkerName()).not.toBe(workerName())
    expect(runs(workflow.jobs.production!)).not.toContain('--env preview')
  })

  it('deploys main after migrating its database', () => {
    const job = workflow.jobs.production!
    expect(job.if).toContain("github.ref_name == 'main'")
    const script = runs(job)
    expect(script.indexOf('npm run db:migrate')).toBeGreaterThan(-1)
    expect(script.indexOf('wrangler deploy')).toBeGreaterThan(script.indexOf('npm run db:migrate'))
  })

  it('deletes the Neon branch when the git branch is deleted', () => {
    const job = workflow.jobs.cleanup!
    expect(job.if).toContain("github.event_name == 'delete'")
    expect(uses(job).some((u) => u.startsWith('neondatabase/delete-branch-action@'))).toBe(true)
  })

  it('only calls npm scripts that exist', () => {
    const called = Object.values(workflow.jobs).flatMap((job) => [...runs(job).matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1]!))
    expect(called.filter((name) => !pkg.scripts[name])).toEqual([])
  })

  it('names previews with the script the workflow calls', async () => {
    const { stdout } = await promisify(execFile)('node_modules/.bin/tsx', ['scripts/branch-names.ts', 'feature/Login'])
    expect(stdout).toMatch(/^alias=feature-login-[0-9a-f]{6}\nneon_branch=preview\/feature-login-[0-9a-f]{6}\n$/)
  })
})

describe('npm run preview', () => {
  it('explains what it needs when the Neon credentials are missing', async () => {
    const env = { ...process.env, NEON_API_KEY: '', NEON_PROJECT_ID: '' }
    const result = await promisify(execFile)('node_modules/.bin/tsx', ['scripts/preview.ts', 'feature/x'], { env }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    )
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('NEON_API_KEY is not set')
  })
})
