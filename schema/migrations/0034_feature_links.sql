CREATE TABLE "feature_links" (
	"id" text PRIMARY KEY NOT NULL,
	"feature_name" text NOT NULL,
	"slot" smallint NOT NULL,
	"url" text NOT NULL,
	"title" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "feature_links_slot_unique" UNIQUE("feature_name","slot"),
	CONSTRAINT "feature_links_slot_range" CHECK ("feature_links"."slot" between 0 and 9)
);
--> statement-breakpoint
ALTER TABLE "feature_links" ADD CONSTRAINT "feature_links_feature_name_features_name_fk" FOREIGN KEY ("feature_name") REFERENCES "public"."features"("name") ON DELETE cascade ON UPDATE no action;