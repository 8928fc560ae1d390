ALTER TABLE "context_fields" ADD COLUMN "project" text;--> statement-breakpoint
ALTER TABLE "context_fields" ADD CONSTRAINT "context_fields_project_projects_id_fk" FOREIGN KEY ("project") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "context_fields_project_idx" ON "context_fields" USING btree ("project");