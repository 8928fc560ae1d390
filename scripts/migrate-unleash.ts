// npm run migrate:unleash -- --url https://unleash.example --token '*:*.xxx' [--dry-run] [--on-conflict=fail|skip]
// Reads a running Unleash 8.2 through its admin API and writes it into the database the server uses
// (DATABASE_URL, else the embedded one in FLAGPOST_DATA_DIR or ./.flagpost), in one transaction with its events.
import { parseArgs } from 'node:util'
import { openPg, openPglite, type NodeDbHandle } from '../src/db-node.js'
import { callerOf, SYSTEM_USER_ID } from '../src/core/principal.js'
import { ApiError } from '../src/core/errors.js'
import { MigrationRefused, migrateFromUnleash, unleashGet, type OnConflict } from '../src/migrate/unleash.js'

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    token: { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
    'on-conflict': { type: 'string', default: 'fail' },
  },
})
const token = values.token ?? process.env.UNLEASH_ADMIN_TOKEN
if (!values.url || !token || !['fail', 'skip'].includes(values['on-conflict']!)) {
  console.error("usage: npm run migrate:unleash -- --url https://unleash.example --token '*:*.xxx' [--dry-run] [--on-conflict=fail|skip]\n(the token may also be given as UNLEASH_ADMIN_TOKEN)")
  process.exit(2)
}
const mask = (text: string) => text.replaceAll(token, '*****')

const database: NodeDbHandle = process.env.DATABASE_URL ? openPg(process.env.DATABASE_URL) : await openPglite({ dataDir: process.env.FLAGPOST_DATA_DIR ?? './.flagpost' })
try {
  await database.migrate()
  // The operator runs this on their own machine: their Unleash may be on a private network, so no address is refused.
  const get = unleashGet(values.url, token, (url, init) => fetch(url, init), 30_000)
  const caller = callerOf({ kind: 'admin-token', tokenId: 0, name: 'migrate:unleash', rootRole: 'Admin' }, new Date())
  caller.actor = { createdBy: 'migrate:unleash', createdByUserId: SYSTEM_USER_ID }
  const { plan, result } = await migrateFromUnleash(database.db, caller, get, { dryRun: values['dry-run']!, onConflict: values['on-conflict'] as OnConflict }, () => {})
  console.log(values['dry-run'] ? 'Plan (dry run, nothing written):' : 'Migrated:')
  for (const [kind, n] of Object.entries(plan.counts)) console.log(`  ${kind}: ${n}`)
  if (plan.conflicts.names.length > 0) console.log(`Flags already in Flagpost (${plan.conflicts.onConflict}): ${plan.conflicts.names.join(', ')}`)
  if (result) console.log(`Written: ${JSON.stringify(result.imported)}; ${result.events} events recorded`)
  console.log('Not carried:')
  for (const line of plan.notCarried) console.log(`  - ${mask(line)}`)
} catch (error) {
  if (error instanceof MigrationRefused || error instanceof ApiError) {
    console.error(`Migration refused: ${mask(error.message)}`)
    process.exitCode = 1
  } else throw error
} finally {
  await database.close()
}
