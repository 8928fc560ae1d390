import { execFile } from 'node:child_process'
import { access, readFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { inject } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))

export interface WranglerConfig {
  main: string
  compatibilityDate: string
  compatibilityFlags: string[]
  /**
   * The [assets] section: the web console's files, served in front of the worker except on `runWorkerFirst`, and
   * the worker's binding to them (`binding`), through which it reads the OpenAPI document the build put there.
   */
  assets?: { directory: string; binding?: string; notFoundHandling: string; runWorkerFirst: string[] }
  /**
   * The top-level `rules`, as Miniflare's `modulesRules` takes them: which files next to the entry are modules of
   * the worker (the build puts what it loads lazily in modules of their own, which Miniflare finds by their imports).
   */
  modulesRules: { type: 'ESModule' | 'CommonJS' | 'Text' | 'Data' | 'CompiledWasm'; include: string[] }[]
  /** The top-level [[durable_objects.bindings]]: binding name to class, as Miniflare's `durableObjects` takes them (SQLite-backed, as the migrations declare). */
  durableObjects: Record<string, { className: string; useSQLite: true }>
}

/** The few top-level keys of wrangler.toml that Miniflare needs to run the bundle like Cloudflare does. */
export async function readWranglerConfig(): Promise<WranglerConfig> {
  const toml = await readFile(join(root, 'wrangler.toml'), 'utf8')
  const key = (name: string) => toml.match(new RegExp(`^${name}\\s*=\\s*(.+?)\\s*(#.*)?$`, 'm'))?.[1]
  const main = key('main')?.match(/^"(.*)"$/)?.[1]
  const compatibilityDate = key('compatibility_date')?.match(/^"(.*)"$/)?.[1]
  if (!main || !compatibilityDate) throw new Error('wrangler.toml: main and compatibility_date must be set as plain strings')
  const compatibilityFlags = [...(key('compatibility_flags') ?? '[]').matchAll(/"([^"]+)"/g)].map((m) => m[1]!)
  const section = toml.match(/^\[assets\]\n((?:[^[\n].*\n)+)/m)?.[1]
  const inAssets = (name: string) => section?.match(new RegExp(`^${name}\\s*=\\s*(.+?)\\s*$`, 'm'))?.[1]
  const directory = inAssets('directory')?.match(/^"(.*)"$/)?.[1]
  const binding = inAssets('binding')?.match(/^"(.*)"$/)?.[1]
  const assets = directory
    ? {
        directory: join(root, directory),
        ...(binding ? { binding } : {}),
        notFoundHandling: inAssets('not_found_handling')?.match(/^"(.*)"$/)?.[1] ?? 'none',
        runWorkerFirst: [...(inAssets('run_worker_first') ?? '[]').matchAll(/"([^"]+)"/g)].map((m) => m[1]!),
      }
    : undefined
  const modulesRules = [...(toml.match(/^rules\s*=\s*\[(.*)\]\s*$/m)?.[1] ?? '').matchAll(/\{\s*type\s*=\s*"(\w+)",\s*globs\s*=\s*\[([^\]]*)\]\s*\}/g)].map(([, type, globs]) => ({
    type: type as WranglerConfig['modulesRules'][number]['type'],
    include: [...globs!.matchAll(/"([^"]+)"/g)].map((m) => m[1]!),
  }))
  const durableObjects: WranglerConfig['durableObjects'] = {}
  for (const [, body] of toml.matchAll(/^\[\[durable_objects\.bindings\]\]\n((?:[^[\n].*\n)+)/gm)) {
    const name = body!.match(/^name\s*=\s*"(.*)"/m)?.[1]
    const className = body!.match(/^class_name\s*=\s*"(.*)"/m)?.[1]
    if (name && className) durableObjects[name] = { className, useSQLite: true }
  }
  return { main, compatibilityDate, compatibilityFlags, modulesRules, ...(assets ? { assets } : {}), durableObjects }
}

/**
 * Miniflare's options for the built worker as Cloudflare runs it: an ES module entry, its lazily loaded modules found
 * next to it (`modulesRules`; module names are relative to the bundle's folder), the compatibility date and flags.
 */
export function workerModuleOptions(scriptPath: string, config: WranglerConfig) {
  return {
    modules: true as const,
    scriptPath,
    modulesRoot: dirname(scriptPath),
    modulesRules: config.modulesRules,
    compatibilityDate: config.compatibilityDate,
    compatibilityFlags: config.compatibilityFlags,
  }
}

/** Miniflare's options for the [assets] of wrangler.toml, routed as Cloudflare routes them (run_worker_first). */
export function assetsOptions(config: WranglerConfig) {
  if (!config.assets) return {}
  const { directory, binding, notFoundHandling, runWorkerFirst } = config.assets
  return {
    assets: {
      directory,
      ...(binding ? { binding } : {}),
      routerConfig: { has_user_worker: true, static_routing: { user_worker: runWorkerFirst } },
      assetConfig: { not_found_handling: notFoundHandling as 'single-page-application' | '404-page' | 'none' },
    },
  }
}

/** The deployable bundle the workerd project's global setup built (test/workerd/build-setup.ts): its entry file. */
export async function builtWorker(): Promise<string> {
  return inject('workerScriptPath')
}

/**
 * Builds the deployable bundle into `dir`/bundle with the project's own wrangler and returns its entry file.
 * No login or network: no metrics, no banner (its update check), and wrangler's debug log goes to `dir` too.
 */
export async function buildWorker(dir: string, config: WranglerConfig): Promise<string> {
  const wrangler = join(root, 'node_modules/.bin/wrangler')
  const outdir = join(dir, 'bundle')
  try {
    await promisify(execFile)(process.execPath, [wrangler, 'deploy', '--dry-run', '--outdir', outdir], {
      cwd: root,
      env: {
        ...process.env,
        WRANGLER_SEND_METRICS: 'false',
        CLOUDFLARE_CF_FETCH_ENABLED: 'false',
        WRANGLER_HIDE_BANNER: 'true',
        WRANGLER_LOG_PATH: join(dir, 'wrangler-logs'),
        NO_COLOR: '1',
      },
      timeout: 60_000,
    })
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string }
    throw new Error(`wrangler build failed:\n${stdout ?? ''}\n${stderr ?? ''}`, { cause: error })
  }
  const scriptPath = join(outdir, basename(config.main).replace(/\.[cm]?[jt]sx?$/, '.js'))
  await access(scriptPath)
  return scriptPath
}
