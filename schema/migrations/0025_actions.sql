CREATE SEQUENCE "public"."action_ids" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "action_set_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"action_set_id" integer NOT NULL,
	"signal_id" bigint NOT NULL,
	"state" text NOT NULL,
	"signal" jsonb NOT NULL,
	"action_set" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"claimed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "action_sets" (
	"id" serial PRIMARY KEY NOT NULL,
	"project" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"actor_id" integer NOT NULL,
	"source" text DEFAULT 'signal-endpoint' NOT NULL,
	"source_id" integer NOT NULL,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"actions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by_user_id" integer
);
--> statement-breakpoint
ALTER TABLE "action_set_events" ADD CONSTRAINT "action_set_events_action_set_id_action_sets_id_fk" FOREIGN KEY ("action_set_id") REFERENCES "public"."action_sets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "action_sets" ADD CONSTRAINT "action_sets_project_projects_id_fk" FOREIGN KEY ("project") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "action_sets" ADD CONSTRAINT "action_sets_actor_id_users_id_fk" FOREIGN KEY ("actor_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "action_sets" ADD CONSTRAINT "action_sets_source_id_signal_endpoints_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."signal_endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "action_set_events_set_idx" ON "action_set_events" USING btree ("action_set_id","id");--> statement-breakpoint
CREATE INDEX "action_set_events_started_idx" ON "action_set_events" USING btree ("id") WHERE state = 'started';--> statement-breakpoint
CREATE UNIQUE INDEX "action_sets_project_name_unique" ON "action_sets" USING btree ("project","name");--> statement-breakpoint
CREATE INDEX "action_sets_source_idx" ON "action_sets" USING btree ("source_id");--> statement-breakpoint
CREATE INDEX "action_sets_actor_idx" ON "action_sets" USING btree ("actor_id");