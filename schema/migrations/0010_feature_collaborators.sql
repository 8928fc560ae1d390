CREATE TABLE "feature_collaborators" (
	"feature_name" text NOT NULL,
	"created_by" text NOT NULL,
	"created_by_user_id" integer,
	"latest_event_id" bigint NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "feature_collaborators_author_unique" ON "feature_collaborators" USING btree ("feature_name","created_by",coalesce("created_by_user_id", -1));--> statement-breakpoint
CREATE INDEX "feature_collaborators_latest_idx" ON "feature_collaborators" USING btree ("feature_name","latest_event_id");--> statement-breakpoint
-- Backfill: the authors of the events written so far, as the flag read used to aggregate them.
INSERT INTO "feature_collaborators" ("feature_name", "created_by", "created_by_user_id", "latest_event_id")
SELECT "feature_name", "created_by", "created_by_user_id", max("id") FROM "events"
WHERE "feature_name" IS NOT NULL
GROUP BY "feature_name", "created_by", "created_by_user_id";
