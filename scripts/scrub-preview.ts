// Scrubs a copy of the production database before a preview (unreviewed code on a public URL) runs on it:
// no production credential works there, no integration delivers from it, and it holds no passwords or
// personal e-mail addresses. Idempotent. `DATABASE_URL=… tsx scripts/scrub-preview.ts`; with
// PREVIEW_ADMIN_TOKEN (`*:*.<secret>`, a secret valid for previews only) that admin token is created after.
import { sql } from 'drizzle-orm'
import { pathToFileURL } from 'node:url'
import { bootstrapAdminTokens } from '../src/api-tokens/store.js'
import type { Db } from '../src/db.js'
import { openPg } from '../src/db-node.js'

/** Everything a preview must not inherit, removed in one transaction. */
export async function scrubPreview(db: Db): Promise<void> {
  await db.transaction(async (tx) => {
    // Credentials: sessions, API tokens and personal access tokens, invite and reset links, passwords, the OIDC secret.
    await tx.execute(sql`delete from sessions`)
    await tx.execute(sql`delete from api_tokens`)
    await tx.execute(sql`delete from reset_tokens`)
    await tx.execute(sql`update users set password_hash = null, login_attempts = 0, email = case when email is null then null else 'user-' || id || '@preview.invalid' end`)
    await tx.execute(sql`update settings set content = (content - 'secret') || '{"enabled": false}'::jsonb where name = 'oidc'`)
    // Integrations: their secrets, their queued deliveries and their delivery logs.
    await tx.execute(sql`delete from integration_outbox`)
    await tx.execute(sql`delete from integration_events`)
    await tx.execute(sql`delete from addons`)
    // Personal data in what SDKs reported and in account events.
    await tx.execute(sql`delete from client_metrics_inbox`)
    await tx.execute(sql`update client_instances set client_ip = null`)
    await tx.execute(sql`update events set data = null, pre_data = null where type like 'user-%'`)
  })
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const url = process.env.DATABASE_URL
  if (!url) {
    console.error('DATABASE_URL is not set: give the connection string of the preview database to scrub')
    process.exit(1)
  }
  const previewToken = process.env.PREVIEW_ADMIN_TOKEN
  const database = openPg(url)
  try {
    await scrubPreview(database.db)
    if (previewToken) await bootstrapAdminTokens(database.db, new Date(), [previewToken])
    console.log('Preview database scrubbed: no production credential, integration or password is left in it.')
  } finally {
    await database.close()
  }
}
