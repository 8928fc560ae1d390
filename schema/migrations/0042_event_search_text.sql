CREATE TABLE "event_search_state" (
	"id" integer PRIMARY KEY NOT NULL,
	"indexed_through" bigint NOT NULL,
	"candidate_id" bigint,
	"candidate_xmax" bigint
);
--> statement-breakpoint
CREATE TABLE "event_search_text" (
	"event_id" bigint PRIMARY KEY NOT NULL,
	"text" text NOT NULL
);

--> statement-breakpoint
-- BEGIN hand-written (carry over when regenerating this migration)
-- The event search's free text moves off the write path: the events' own trigram index (0004) made every event
-- written add its trigrams to a GIN pending list that all writers share, in the write's transaction. The text is
-- now indexed by a job after the write (src/events/text-index.ts); the search reads the events above
-- indexed_through that are not indexed yet from the events themselves, so its answers are the same at any time.
-- The same expression as src/events/search.ts's searchText.
INSERT INTO "event_search_text" ("event_id", "text")
  SELECT "id", lower(coalesce("data"::text, '') || ' ' || coalesce("pre_data"::text, '') || ' ' || "tags"::text) FROM "events";
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "event_search_text_trgm_idx" ON "event_search_text" USING gin ("text" gin_trgm_ops);
--> statement-breakpoint
DROP INDEX IF EXISTS "events_search_text_idx";
--> statement-breakpoint
-- 0: an event being written while this runs may have an id below those copied. The job's first two runs move it up
-- (src/events/text-index.ts, advance).
INSERT INTO "event_search_state" ("id", "indexed_through") VALUES (1, 0);
-- END hand-written
