CREATE TABLE "context_fields" (
	"name" text PRIMARY KEY NOT NULL,
	"description" text,
	"stickiness" boolean DEFAULT false NOT NULL,
	"sort_order" integer DEFAULT 10 NOT NULL,
	"legal_values" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "context_fields_sort_idx" ON "context_fields" USING btree ("sort_order","name");--> statement-breakpoint
-- The context fields a fresh Unleash has, with its descriptions, sort orders and stickiness (only sessionId is
-- offered for custom stickiness there; remoteAddress is not a field Unleash ships).
INSERT INTO "context_fields" ("name", "description", "sort_order", "stickiness") VALUES
  ('environment', 'Allows you to constrain on application environment', 0, false),
  ('userId', 'Allows you to constrain on userId', 1, false),
  ('appName', 'Allows you to constrain on application name', 2, false),
  ('currentTime', 'Allows you to constrain on date values', 3, false),
  ('sessionId', 'Allows you to constrain on sessionId', 4, true)
ON CONFLICT ("name") DO NOTHING;
