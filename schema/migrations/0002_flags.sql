CREATE TABLE "favorite_features" (
	"principal" text NOT NULL,
	"feature_name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "favorite_features_principal_feature_name_pk" PRIMARY KEY("principal","feature_name")
);
--> statement-breakpoint
CREATE TABLE "favorite_projects" (
	"principal" text NOT NULL,
	"project" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "favorite_projects_principal_project_pk" PRIMARY KEY("principal","project")
);
--> statement-breakpoint
CREATE TABLE "feature_dependencies" (
	"child" text NOT NULL,
	"parent" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"variants" jsonb DEFAULT '[]'::jsonb NOT NULL,
	CONSTRAINT "feature_dependencies_child_parent_pk" PRIMARY KEY("child","parent")
);
--> statement-breakpoint
CREATE TABLE "feature_environments" (
	"feature_name" text NOT NULL,
	"environment" text NOT NULL,
	"enabled" boolean DEFAULT false NOT NULL,
	"variants" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"last_seen_at" timestamp with time zone,
	CONSTRAINT "feature_environments_feature_name_environment_pk" PRIMARY KEY("feature_name","environment")
);
--> statement-breakpoint
CREATE TABLE "feature_lifecycles" (
	"feature_name" text NOT NULL,
	"stage" text NOT NULL,
	"status" text,
	"status_value" text,
	"entered_stage_at" timestamp with time zone NOT NULL,
	CONSTRAINT "feature_lifecycles_feature_name_stage_pk" PRIMARY KEY("feature_name","stage")
);
--> statement-breakpoint
CREATE TABLE "feature_strategies" (
	"id" uuid PRIMARY KEY NOT NULL,
	"feature_name" text NOT NULL,
	"environment" text NOT NULL,
	"strategy_name" text NOT NULL,
	"title" text,
	"disabled" boolean DEFAULT false NOT NULL,
	"sort_order" integer DEFAULT 0 NOT NULL,
	"parameters" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"constraints" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"variants" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "feature_strategy_segments" (
	"strategy_id" uuid NOT NULL,
	"segment_id" integer NOT NULL,
	CONSTRAINT "feature_strategy_segments_strategy_id_segment_id_pk" PRIMARY KEY("strategy_id","segment_id")
);
--> statement-breakpoint
CREATE TABLE "feature_tags" (
	"feature_name" text NOT NULL,
	"tag_type" text NOT NULL,
	"tag_value" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "feature_tags_feature_name_tag_type_tag_value_pk" PRIMARY KEY("feature_name","tag_type","tag_value")
);
--> statement-breakpoint
CREATE TABLE "features" (
	"name" text PRIMARY KEY NOT NULL,
	"project" text NOT NULL,
	"type" text DEFAULT 'release' NOT NULL,
	"description" text,
	"stale" boolean DEFAULT false NOT NULL,
	"impression_data" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"created_by_user_id" integer,
	"archived_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "segments" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"project" text,
	"constraints" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text
);
--> statement-breakpoint
ALTER TABLE "favorite_features" ADD CONSTRAINT "favorite_features_feature_name_features_name_fk" FOREIGN KEY ("feature_name") REFERENCES "public"."features"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "favorite_projects" ADD CONSTRAINT "favorite_projects_project_projects_id_fk" FOREIGN KEY ("project") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feature_dependencies" ADD CONSTRAINT "feature_dependencies_child_features_name_fk" FOREIGN KEY ("child") REFERENCES "public"."features"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feature_dependencies" ADD CONSTRAINT "feature_dependencies_parent_features_name_fk" FOREIGN KEY ("parent") REFERENCES "public"."features"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feature_environments" ADD CONSTRAINT "feature_environments_feature_name_features_name_fk" FOREIGN KEY ("feature_name") REFERENCES "public"."features"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feature_environments" ADD CONSTRAINT "feature_environments_environment_environments_name_fk" FOREIGN KEY ("environment") REFERENCES "public"."environments"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feature_lifecycles" ADD CONSTRAINT "feature_lifecycles_feature_name_features_name_fk" FOREIGN KEY ("feature_name") REFERENCES "public"."features"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feature_strategies" ADD CONSTRAINT "feature_strategies_feature_name_features_name_fk" FOREIGN KEY ("feature_name") REFERENCES "public"."features"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feature_strategies" ADD CONSTRAINT "feature_strategies_environment_environments_name_fk" FOREIGN KEY ("environment") REFERENCES "public"."environments"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feature_strategy_segments" ADD CONSTRAINT "feature_strategy_segments_strategy_id_feature_strategies_id_fk" FOREIGN KEY ("strategy_id") REFERENCES "public"."feature_strategies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feature_strategy_segments" ADD CONSTRAINT "feature_strategy_segments_segment_id_segments_id_fk" FOREIGN KEY ("segment_id") REFERENCES "public"."segments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feature_tags" ADD CONSTRAINT "feature_tags_feature_name_features_name_fk" FOREIGN KEY ("feature_name") REFERENCES "public"."features"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "features" ADD CONSTRAINT "features_project_projects_id_fk" FOREIGN KEY ("project") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "segments" ADD CONSTRAINT "segments_project_projects_id_fk" FOREIGN KEY ("project") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "feature_dependencies_parent_idx" ON "feature_dependencies" USING btree ("parent");--> statement-breakpoint
CREATE INDEX "feature_strategies_feature_idx" ON "feature_strategies" USING btree ("feature_name","environment","sort_order");--> statement-breakpoint
CREATE INDEX "feature_strategy_segments_segment_idx" ON "feature_strategy_segments" USING btree ("segment_id");--> statement-breakpoint
CREATE INDEX "features_project_idx" ON "features" USING btree ("project","name");