CREATE TABLE "client_metrics_daily" (
	"feature_name" text NOT NULL,
	"app_name" text NOT NULL,
	"environment" text NOT NULL,
	"date" timestamp with time zone NOT NULL,
	"yes" bigint NOT NULL,
	"no" bigint NOT NULL,
	CONSTRAINT "client_metrics_daily_feature_name_app_name_environment_date_pk" PRIMARY KEY("feature_name","app_name","environment","date")
);
--> statement-breakpoint
CREATE TABLE "client_metrics_variants_daily" (
	"feature_name" text NOT NULL,
	"app_name" text NOT NULL,
	"environment" text NOT NULL,
	"date" timestamp with time zone NOT NULL,
	"variant" text NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "client_metrics_variants_daily_feature_name_app_name_environment_date_variant_pk" PRIMARY KEY("feature_name","app_name","environment","date","variant")
);
--> statement-breakpoint
ALTER TABLE "client_metrics_daily" ADD CONSTRAINT "client_metrics_daily_feature_name_features_name_fk" FOREIGN KEY ("feature_name") REFERENCES "public"."features"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "client_metrics_daily" ADD CONSTRAINT "client_metrics_daily_environment_environments_name_fk" FOREIGN KEY ("environment") REFERENCES "public"."environments"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "client_metrics_variants_daily" ADD CONSTRAINT "client_metrics_variants_daily_feature_name_features_name_fk" FOREIGN KEY ("feature_name") REFERENCES "public"."features"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "client_metrics_variants_daily" ADD CONSTRAINT "client_metrics_variants_daily_environment_environments_name_fk" FOREIGN KEY ("environment") REFERENCES "public"."environments"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "client_metrics_daily_date_idx" ON "client_metrics_daily" USING btree ("date");--> statement-breakpoint
CREATE INDEX "client_metrics_variants_daily_date_idx" ON "client_metrics_variants_daily" USING btree ("date");