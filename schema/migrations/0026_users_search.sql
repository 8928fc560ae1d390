-- BEGIN hand-written (carry over when regenerating this migration)
-- The user search (GET /api/admin/user-admin/search) finds text in the name, username and e-mail by trigrams (pg_trgm, from 0004): the same expression as src/users/store.ts.
CREATE INDEX IF NOT EXISTS "users_search_text_idx" ON "users" USING gin ((lower(coalesce("name", '') || ' ' || coalesce("username", '') || ' ' || coalesce("email", ''))) gin_trgm_ops);
-- END hand-written
