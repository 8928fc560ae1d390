CREATE TABLE "client_applications" (
	"app_name" text PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"created_by" text NOT NULL,
	"seen_at" timestamp with time zone NOT NULL,
	"sdk_version" text,
	"strategies" jsonb,
	"description" text,
	"url" text,
	"color" text,
	"icon" text
);
--> statement-breakpoint
CREATE TABLE "client_instances" (
	"app_name" text NOT NULL,
	"instance_id" text NOT NULL,
	"environment" text NOT NULL,
	"sdk_version" text,
	"client_ip" text,
	"created_at" timestamp with time zone NOT NULL,
	"last_seen" timestamp with time zone NOT NULL,
	CONSTRAINT "client_instances_app_name_instance_id_environment_pk" PRIMARY KEY("app_name","instance_id","environment")
);
--> statement-breakpoint
CREATE TABLE "client_metrics_hourly" (
	"feature_name" text NOT NULL,
	"app_name" text NOT NULL,
	"environment" text NOT NULL,
	"timestamp" timestamp with time zone NOT NULL,
	"yes" bigint NOT NULL,
	"no" bigint NOT NULL,
	CONSTRAINT "client_metrics_hourly_feature_name_app_name_environment_timestamp_pk" PRIMARY KEY("feature_name","app_name","environment","timestamp")
);
--> statement-breakpoint
CREATE TABLE "client_metrics_inbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	"kind" text NOT NULL,
	"app_name" text NOT NULL,
	"instance_id" text,
	"environment" text NOT NULL,
	"projects" text[] NOT NULL,
	"token_name" text NOT NULL,
	"client_ip" text,
	"payload" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "client_metrics_variants_hourly" (
	"feature_name" text NOT NULL,
	"app_name" text NOT NULL,
	"environment" text NOT NULL,
	"timestamp" timestamp with time zone NOT NULL,
	"variant" text NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "client_metrics_variants_hourly_feature_name_app_name_environment_timestamp_variant_pk" PRIMARY KEY("feature_name","app_name","environment","timestamp","variant")
);
--> statement-breakpoint
ALTER TABLE "client_instances" ADD CONSTRAINT "client_instances_app_name_client_applications_app_name_fk" FOREIGN KEY ("app_name") REFERENCES "public"."client_applications"("app_name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "client_metrics_hourly" ADD CONSTRAINT "client_metrics_hourly_feature_name_features_name_fk" FOREIGN KEY ("feature_name") REFERENCES "public"."features"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "client_metrics_hourly" ADD CONSTRAINT "client_metrics_hourly_environment_environments_name_fk" FOREIGN KEY ("environment") REFERENCES "public"."environments"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "client_metrics_variants_hourly" ADD CONSTRAINT "client_metrics_variants_hourly_feature_name_features_name_fk" FOREIGN KEY ("feature_name") REFERENCES "public"."features"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "client_metrics_variants_hourly" ADD CONSTRAINT "client_metrics_variants_hourly_environment_environments_name_fk" FOREIGN KEY ("environment") REFERENCES "public"."environments"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "client_metrics_hourly_timestamp_idx" ON "client_metrics_hourly" USING btree ("timestamp");--> statement-breakpoint
CREATE INDEX "client_metrics_hourly_app_idx" ON "client_metrics_hourly" USING btree ("app_name");--> statement-breakpoint
CREATE INDEX "client_metrics_variants_hourly_timestamp_idx" ON "client_metrics_variants_hourly" USING btree ("timestamp");