CREATE TABLE "client_impact_metrics" (
	"app_name" text NOT NULL,
	"environment" text NOT NULL,
	"name" text NOT NULL,
	"labels_key" text NOT NULL,
	"labels" jsonb NOT NULL,
	"type" text NOT NULL,
	"help" text NOT NULL,
	"value" double precision,
	"count" double precision,
	"sum" double precision,
	"buckets" jsonb,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "client_impact_metrics_app_name_environment_name_labels_key_pk" PRIMARY KEY("app_name","environment","name","labels_key")
);
--> statement-breakpoint
ALTER TABLE "client_impact_metrics" ADD CONSTRAINT "client_impact_metrics_app_name_client_applications_app_name_fk" FOREIGN KEY ("app_name") REFERENCES "public"."client_applications"("app_name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "client_impact_metrics_updated_at_idx" ON "client_impact_metrics" USING btree ("updated_at");