CREATE TABLE "user_feedback" (
	"user_id" integer NOT NULL,
	"feedback_id" text NOT NULL,
	"given" timestamp with time zone,
	"never_show" boolean DEFAULT false NOT NULL,
	CONSTRAINT "user_feedback_user_id_feedback_id_pk" PRIMARY KEY("user_id","feedback_id")
);
--> statement-breakpoint
CREATE TABLE "user_splash" (
	"user_id" integer NOT NULL,
	"splash_id" text NOT NULL,
	"seen" boolean DEFAULT false NOT NULL,
	CONSTRAINT "user_splash_user_id_splash_id_pk" PRIMARY KEY("user_id","splash_id")
);
--> statement-breakpoint
CREATE TABLE "unknown_flags" (
	"name" text NOT NULL,
	"app_name" text NOT NULL,
	"environment" text NOT NULL,
	"seen_at" timestamp with time zone NOT NULL,
	CONSTRAINT "unknown_flags_name_app_name_environment_pk" PRIMARY KEY("name","app_name","environment")
);
--> statement-breakpoint
ALTER TABLE "user_feedback" ADD CONSTRAINT "user_feedback_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_splash" ADD CONSTRAINT "user_splash_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "unknown_flags_seen_at_idx" ON "unknown_flags" USING btree ("seen_at");--> statement-breakpoint
CREATE INDEX "unknown_flags_app_env_idx" ON "unknown_flags" USING btree ("app_name","environment");