CREATE TABLE "feature_types" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"lifetime_days" integer,
	"sort_order" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "features" ADD COLUMN "potentially_stale" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "features_created_at_idx" ON "features" USING btree ("created_at","name");--> statement-breakpoint
-- BEGIN hand-written (carry over when regenerating this migration)
-- Unleash's five flag types with their default lifetimes, as Unleash seeds them.
INSERT INTO "feature_types" ("id", "name", "description", "lifetime_days", "sort_order") VALUES
	('release', 'Release', 'Release feature flags are used to release new features.', 40, 0),
	('experiment', 'Experiment', 'Experiment feature flags are used to test and verify multiple different versions of a feature.', 40, 1),
	('operational', 'Operational', 'Operational feature flags are used to control aspects of a rollout.', 7, 2),
	('kill-switch', 'Kill switch', 'Kill switch feature flags are used to quickly turn on or off critical functionality in your system.', NULL, 3),
	('permission', 'Permission', 'Permission feature flags are used to control permissions in your system.', NULL, 4)
	ON CONFLICT DO NOTHING;--> statement-breakpoint
-- The flag search's free text (name and description), found by trigrams: the same expression as src/flags/search.ts (on its alias g).
CREATE INDEX IF NOT EXISTS "features_search_text_idx" ON "features" USING gin ((lower("name" || ' ' || coalesce("description", ''))) gin_trgm_ops);
-- END hand-written
