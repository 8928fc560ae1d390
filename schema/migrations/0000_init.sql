CREATE TABLE "environments" (
	"name" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"protected" boolean DEFAULT false NOT NULL,
	"sort_order" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "project_environments" (
	"project_id" text NOT NULL,
	"environment_name" text NOT NULL,
	"change_requests_enabled" boolean DEFAULT false NOT NULL,
	"required_approvals" integer DEFAULT 1 NOT NULL,
	"default_strategy" jsonb,
	CONSTRAINT "project_environments_project_id_environment_name_pk" PRIMARY KEY("project_id","environment_name")
);
--> statement-breakpoint
CREATE TABLE "projects" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"mode" text DEFAULT 'open' NOT NULL,
	"default_stickiness" text DEFAULT 'default' NOT NULL,
	"feature_limit" integer,
	"feature_naming_pattern" text,
	"feature_naming_example" text,
	"feature_naming_description" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone,
	"archived_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "api_tokens" (
	"id" serial PRIMARY KEY NOT NULL,
	"secret_hash" text NOT NULL,
	"display_secret" text NOT NULL,
	"token_name" text NOT NULL,
	"type" text NOT NULL,
	"projects" text[] NOT NULL,
	"environment" text NOT NULL,
	"user_id" integer,
	"expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"seen_at" timestamp with time zone,
	CONSTRAINT "api_tokens_secret_hash_unique" UNIQUE("secret_hash")
);
--> statement-breakpoint
CREATE TABLE "roles" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"description" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "roles_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text,
	"username" text,
	"email" text,
	"password_hash" text,
	"root_role_id" integer NOT NULL,
	"login_attempts" integer DEFAULT 0 NOT NULL,
	"seen_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"type" text NOT NULL,
	"created_by" text NOT NULL,
	"created_by_user_id" integer,
	"project" text,
	"environment" text,
	"feature_name" text,
	"data" jsonb,
	"pre_data" jsonb,
	"tags" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"label" text,
	"summary" text
);
--> statement-breakpoint
ALTER TABLE "project_environments" ADD CONSTRAINT "project_environments_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_environments" ADD CONSTRAINT "project_environments_environment_name_environments_name_fk" FOREIGN KEY ("environment_name") REFERENCES "public"."environments"("name") ON DELETE cascade ON UPDATE cascade;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_root_role_id_roles_id_fk" FOREIGN KEY ("root_role_id") REFERENCES "public"."roles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_tokens_display_secret_idx" ON "api_tokens" USING btree ("display_secret");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_unique" ON "users" USING btree (lower("email"));--> statement-breakpoint
CREATE UNIQUE INDEX "users_username_unique" ON "users" USING btree ("username");--> statement-breakpoint
CREATE INDEX "events_created_at_idx" ON "events" USING btree ("created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "events_feature_name_idx" ON "events" USING btree ("feature_name","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "events_project_idx" ON "events" USING btree ("project","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "events_type_idx" ON "events" USING btree ("type","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "events_created_by_idx" ON "events" USING btree ("created_by","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);