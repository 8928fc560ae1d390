// Names a git branch's preview: a Workers preview alias and a Neon database branch.
// `tsx scripts/branch-names.ts <git branch>` prints `alias=...` and `neon_branch=...` (GitHub Actions output format).
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

// The preview URL is https://<alias>-<worker>.<subdomain>.workers.dev: `<alias>-<worker>` is one DNS label.
const DNS_LABEL_MAX = 63
const HASH_LENGTH = 6

/** The production worker's name from wrangler.toml. */
export function workerName(toml = readFileSync('wrangler.toml', 'utf8')): string {
  const name = /^name\s*=\s*"([^"]+)"/m.exec(toml)?.[1]
  if (!name) throw new Error('wrangler.toml has no name')
  return name
}

/** The name of the Worker previews are versions of (`[env.preview]` in wrangler.toml): never the production one. */
export function previewWorkerName(toml = readFileSync('wrangler.toml', 'utf8')): string {
  const section = /^\[env\.preview\]\s*$([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(toml)?.[1] ?? ''
  const name = /^name\s*=\s*"([^"]+)"/m.exec(section)?.[1]
  if (!name) throw new Error('wrangler.toml has no [env.preview] name')
  if (name === workerName(toml)) throw new Error('[env.preview] must name a Worker other than production')
  return name
}

const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, HASH_LENGTH)

/**
 * A valid preview alias for any git branch name: lower-case letters, digits and dashes, starting with
 * a letter and not ending with a dash, short enough for one DNS label with the worker's name. Names
 * that had to be changed or cut keep a hash of the original, so two branches never share an alias.
 */
export function previewAlias(branch: string, worker: string): string {
  if (!branch.trim()) throw new Error('The branch name is empty')
  const max = DNS_LABEL_MAX - worker.length - 1
  let alias = branch
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '')
  if (!/^[a-z]/.test(alias)) alias = `b-${alias}`.replace(/-+$/, '')
  const changed = alias !== branch
  if (alias.length > max || (changed && alias.length + HASH_LENGTH + 1 > max)) alias = alias.slice(0, max - HASH_LENGTH - 1).replace(/-+$/, '')
  return changed || alias.length < branch.length ? `${alias}-${shortHash(branch)}` : alias
}

/** The Neon branch of a git branch's preview, derived from the alias (Neon allows these characters and lengths). */
export function neonBranchName(branch: string, worker: string): string {
  return `preview/${previewAlias(branch, worker)}`
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const branch = process.argv[2]
  if (!branch) {
    console.error('usage: tsx scripts/branch-names.ts <git branch>')
    process.exit(1)
  }
  const worker = previewWorkerName()
  console.log(`alias=${previewAlias(branch, worker)}`)
  console.log(`neon_branch=${neonBranchName(branch, worker)}`)
}
