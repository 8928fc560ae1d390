CREATE TABLE "change_request_approvals" (
	"change_request_id" integer NOT NULL,
	"principal" text NOT NULL,
	"created_by" text NOT NULL,
	"created_by_user_id" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "change_request_approvals_change_request_id_principal_pk" PRIMARY KEY("change_request_id","principal")
);
--> statement-breakpoint
CREATE TABLE "change_request_changes" (
	"id" serial PRIMARY KEY NOT NULL,
	"change_request_id" integer NOT NULL,
	"feature" text NOT NULL,
	"action" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_by" text NOT NULL,
	"created_by_user_id" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "change_requests" (
	"id" serial PRIMARY KEY NOT NULL,
	"project" text NOT NULL,
	"environment" text NOT NULL,
	"state" text NOT NULL,
	"title" text,
	"created_by" text NOT NULL,
	"created_by_user_id" integer,
	"created_by_principal" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "change_request_approvals" ADD CONSTRAINT "change_request_approvals_change_request_id_change_requests_id_fk" FOREIGN KEY ("change_request_id") REFERENCES "public"."change_requests"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "change_request_changes" ADD CONSTRAINT "change_request_changes_change_request_id_change_requests_id_fk" FOREIGN KEY ("change_request_id") REFERENCES "public"."change_requests"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "change_requests" ADD CONSTRAINT "change_requests_project_projects_id_fk" FOREIGN KEY ("project") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "change_requests" ADD CONSTRAINT "change_requests_environment_environments_name_fk" FOREIGN KEY ("environment") REFERENCES "public"."environments"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "change_request_changes_request_idx" ON "change_request_changes" USING btree ("change_request_id","id");--> statement-breakpoint
CREATE INDEX "change_requests_project_idx" ON "change_requests" USING btree ("project","id");--> statement-breakpoint
CREATE INDEX "change_requests_draft_idx" ON "change_requests" USING btree ("project","environment","created_by_principal","state");