import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'postgresql',
  schema: './schema/index.ts',
  out: './schema/migrations',
  dbCredentials: { url: process.env.DATABASE_URL ?? '' },
})
