// npm run preview -- <branch>            a preview of <branch> by hand, as the GitHub workflow makes it:
//                                          a Neon branch from main (created or reused), migrated and scrubbed
//                                          (scripts/scrub-preview.ts; PREVIEW_ADMIN_TOKEN, if set, is its admin
//                                          token), and a version of the preview Worker (`[env.preview]`, never
//                                          production's) with that database under the branch's preview alias.
// npm run preview -- --delete <branch>   deletes the branch's Neon database branch.
//
// Needs NEON_API_KEY and NEON_PROJECT_ID, and Cloudflare credentials for wrangler (CLOUDFLARE_API_TOKEN, or `wrangler login`).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { neonBranchName, previewAlias, previewWorkerName } from './branch-names.js'

const NEON_API = 'https://console.neon.tech/api/v2'

function required(name: string): string {
  const value = process.env[name]
  if (!value) {
    console.error(`${name} is not set: a preview needs NEON_API_KEY, NEON_PROJECT_ID and Cloudflare credentials (see README, "Previews per branch")`)
    process.exit(1)
  }
  return value
}

async function neon<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${NEON_API}${path}`, {
    method,
    headers: { authorization: `Bearer ${required('NEON_API_KEY')}`, accept: 'application/json', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`Neon API ${method} ${path}: ${response.status} ${await response.text()}`)
  return (await response.json()) as T
}

interface NeonBranch {
  id: string
  name: string
  default?: boolean
  primary?: boolean
}

async function findBranch(project: string, name: string) {
  const { branches } = await neon<{ branches: NeonBranch[] }>('GET', `/projects/${project}/branches?search=${encodeURIComponent(name)}`)
  return branches.find((b) => b.name === name)
}

async function connectionString(project: string, branch: NeonBranch): Promise<string> {
  const { databases } = await neon<{ databases: { name: string; owner_name: string }[] }>('GET', `/projects/${project}/branches/${branch.id}/databases`)
  const database = databases[0]
  if (!database) throw new Error(`Neon branch ${branch.name} has no database`)
  const query = new URLSearchParams({ branch_id: branch.id, database_name: database.name, role_name: database.owner_name })
  return (await neon<{ uri: string }>('GET', `/projects/${project}/connection_uri?${query}`)).uri
}

async function createPreview(gitBranch: string) {
  const project = required('NEON_PROJECT_ID')
  const worker = previewWorkerName()
  const alias = previewAlias(gitBranch, worker)
  const name = neonBranchName(gitBranch, worker)
  let branch = await findBranch(project, name)
  if (!branch) {
    const { branches } = await neon<{ branches: NeonBranch[] }>('GET', `/projects/${project}/branches`)
    const parent = branches.find((b) => b.name === 'main') ?? branches.find((b) => b.default || b.primary)
    if (!parent) throw new Error('The Neon project has no main branch to branch from')
    branch = (await neon<{ branch: NeonBranch }>('POST', `/projects/${project}/branches`, { branch: { name, parent_id: parent.id }, endpoints: [{ type: 'read_write' }] })).branch
    console.log(`Created Neon branch ${name} from ${parent.name}.`)
  } else {
    console.log(`Reusing Neon branch ${name}.`)
  }
  const databaseUrl = await connectionString(project, branch)
  execFileSync('npm', ['run', 'db:migrate'], { stdio: 'inherit', env: { ...process.env, DATABASE_URL: databaseUrl } })
  // Before any preview code runs on it: no production credential, integration or password is left.
  execFileSync('node_modules/.bin/tsx', ['scripts/scrub-preview.ts'], { stdio: 'inherit', env: { ...process.env, DATABASE_URL: databaseUrl } })
  // The web console is uploaded as the Worker's static assets (wrangler.toml [assets]).
  execFileSync('npm', ['run', 'console:build'], { stdio: 'inherit' })
  const dir = mkdtempSync(join(tmpdir(), 'flagpost-preview-'))
  try {
    const secrets = join(dir, 'secrets.json')
    writeFileSync(secrets, JSON.stringify({ DATABASE_URL: databaseUrl }), { mode: 0o600 })
    execFileSync('node_modules/.bin/wrangler', ['versions', 'upload', '--env', 'preview', '--preview-alias', alias, '--secrets-file', secrets], {
      stdio: 'inherit',
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  console.log(`\nPreview of ${gitBranch}: https://${alias}-${worker}.<your workers.dev subdomain> (wrangler printed the exact URL above)`)
}

async function deletePreview(gitBranch: string) {
  const project = required('NEON_PROJECT_ID')
  const name = neonBranchName(gitBranch, previewWorkerName())
  const branch = await findBranch(project, name)
  if (!branch) return console.log(`There is no Neon branch ${name}.`)
  await neon('DELETE', `/projects/${project}/branches/${branch.id}`)
  console.log(`Deleted Neon branch ${name}.`)
}

const args = process.argv.slice(2)
const remove = args[0] === '--delete'
const gitBranch = remove ? args[1] : args[0]
if (!gitBranch) {
  console.error('usage: npm run preview -- <branch>   |   npm run preview -- --delete <branch>')
  process.exit(1)
}
required('NEON_API_KEY')
;(remove ? deletePreview(gitBranch) : createPreview(gitBranch)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
