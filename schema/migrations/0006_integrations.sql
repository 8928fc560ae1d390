CREATE TABLE "addons" (
	"id" serial PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"description" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"parameters" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"events" text[] NOT NULL,
	"projects" text[] DEFAULT '{}' NOT NULL,
	"environments" text[] DEFAULT '{}' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "integration_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"integration_id" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"state" text NOT NULL,
	"state_details" text NOT NULL,
	"event" jsonb NOT NULL,
	"details" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "integration_outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"integration_id" integer NOT NULL,
	"event_id" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"claimed_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "integration_events" ADD CONSTRAINT "integration_events_integration_id_addons_id_fk" FOREIGN KEY ("integration_id") REFERENCES "public"."addons"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integration_outbox" ADD CONSTRAINT "integration_outbox_integration_id_addons_id_fk" FOREIGN KEY ("integration_id") REFERENCES "public"."addons"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integration_outbox" ADD CONSTRAINT "integration_outbox_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "integration_events_integration_idx" ON "integration_events" USING btree ("integration_id","id");