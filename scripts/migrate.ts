// Applies the committed migrations of schema/migrations to DATABASE_URL (any Postgres, Neon included). Idempotent.
import { openPg } from '../src/db-node.js'

const url = process.env.DATABASE_URL
if (!url) {
  console.error('DATABASE_URL is not set: give the connection string of the database to migrate')
  process.exit(1)
}
const database = openPg(url)
try {
  await database.migrate()
  console.log('Migrations applied.')
} finally {
  await database.close()
}
