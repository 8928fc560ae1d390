CREATE TABLE "event_count_cache" (
	"filter_key" text PRIMARY KEY NOT NULL,
	"up_to_id" bigint NOT NULL,
	"n" bigint NOT NULL,
	"computed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "events_created_at_idx";--> statement-breakpoint
DROP INDEX "events_feature_name_idx";--> statement-breakpoint
DROP INDEX "events_project_idx";--> statement-breakpoint
DROP INDEX "events_type_idx";--> statement-breakpoint
DROP INDEX "events_created_by_idx";--> statement-breakpoint
CREATE INDEX "events_created_by_user_id_idx" ON "events" USING btree ("created_by_user_id","created_at","id");--> statement-breakpoint
CREATE INDEX "events_created_at_idx" ON "events" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "events_feature_name_idx" ON "events" USING btree ("feature_name","created_at","id");--> statement-breakpoint
CREATE INDEX "events_project_idx" ON "events" USING btree ("project","created_at","id");--> statement-breakpoint
CREATE INDEX "events_type_idx" ON "events" USING btree ("type","created_at","id");--> statement-breakpoint
CREATE INDEX "events_created_by_idx" ON "events" USING btree ("created_by","created_at","id");