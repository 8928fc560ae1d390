CREATE TABLE "kept_change_request_settings" (
	"project_id" text NOT NULL,
	"environment_name" text NOT NULL,
	"required_approvals" integer NOT NULL,
	CONSTRAINT "kept_change_request_settings_project_id_environment_name_pk" PRIMARY KEY("project_id","environment_name")
);
--> statement-breakpoint
ALTER TABLE "kept_change_request_settings" ADD CONSTRAINT "kept_change_request_settings_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kept_change_request_settings" ADD CONSTRAINT "kept_change_request_settings_environment_name_environments_name_fk" FOREIGN KEY ("environment_name") REFERENCES "public"."environments"("name") ON DELETE cascade ON UPDATE cascade;