/**
 * How many migrations schema/migrations holds (its meta/_journal.json's entries; test/ready.test.ts checks they agree):
 * GET /ready answers 503 until the database has applied them all, so a new version takes no traffic on an old schema.
 */
export const MIGRATIONS = 43
