CREATE TABLE "tag_types" (
	"name" text PRIMARY KEY NOT NULL,
	"description" text,
	"icon" text,
	"color" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tags" (
	"type" text NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tags_type_value_pk" PRIMARY KEY("type","value")
);
--> statement-breakpoint
-- BEGIN hand-written data (carry over when regenerating this migration; it must run before the foreign key
-- from feature_tags to tags below, which it makes valid for the tags flags already have).
-- The built-in tag type, as Unleash seeds it; then every type and tag already on a flag, registered.
INSERT INTO "tag_types" ("name", "description", "icon") VALUES ('simple', 'Used to simplify filtering of features', '#') ON CONFLICT DO NOTHING;--> statement-breakpoint
INSERT INTO "tag_types" ("name") SELECT DISTINCT "tag_type" FROM "feature_tags" ON CONFLICT DO NOTHING;--> statement-breakpoint
INSERT INTO "tags" ("type", "value", "created_at") SELECT "tag_type", "tag_value", min("created_at") FROM "feature_tags" GROUP BY "tag_type", "tag_value" ON CONFLICT DO NOTHING;--> statement-breakpoint
-- END hand-written data
ALTER TABLE "tags" ADD CONSTRAINT "tags_type_tag_types_name_fk" FOREIGN KEY ("type") REFERENCES "public"."tag_types"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feature_tags" ADD CONSTRAINT "feature_tags_tag_fk" FOREIGN KEY ("tag_type","tag_value") REFERENCES "public"."tags"("type","value") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "feature_tags_tag_idx" ON "feature_tags" USING btree ("tag_type","tag_value");