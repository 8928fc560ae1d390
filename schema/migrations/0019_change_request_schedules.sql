CREATE TABLE "change_request_schedules" (
	"change_request_id" integer PRIMARY KEY NOT NULL,
	"scheduled_at" timestamp with time zone NOT NULL,
	"status" text NOT NULL,
	"reason" text,
	"created_by" text NOT NULL,
	"created_by_user_id" integer,
	"created_by_principal" text NOT NULL,
	"after_event_id" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "change_request_schedules" ADD CONSTRAINT "change_request_schedules_change_request_id_change_requests_id_fk" FOREIGN KEY ("change_request_id") REFERENCES "public"."change_requests"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "change_request_schedules_due_idx" ON "change_request_schedules" USING btree ("status","scheduled_at");