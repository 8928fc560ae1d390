-- Free-text event search (`query`) looks inside data, preData and tags case-insensitively; a trigram
-- index keeps it from scanning the whole table. The expression must match src/events/search.ts.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "events_search_text_idx" ON "events" USING gin ((lower(coalesce("data"::text, '') || ' ' || coalesce("pre_data"::text, '') || ' ' || "tags"::text)) gin_trgm_ops);
