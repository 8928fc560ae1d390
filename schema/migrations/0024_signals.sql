CREATE TABLE "signal_endpoint_tokens" (
	"id" serial PRIMARY KEY NOT NULL,
	"signal_endpoint_id" integer NOT NULL,
	"name" text NOT NULL,
	"secret_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by_user_id" integer,
	CONSTRAINT "signal_endpoint_tokens_secret_hash_unique" UNIQUE("secret_hash")
);
--> statement-breakpoint
CREATE TABLE "signal_endpoints" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by_user_id" integer,
	CONSTRAINT "signal_endpoints_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "signals" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"source" text DEFAULT 'signal-endpoint' NOT NULL,
	"source_id" integer NOT NULL,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by_source_token_id" integer
);
--> statement-breakpoint
ALTER TABLE "signal_endpoint_tokens" ADD CONSTRAINT "signal_endpoint_tokens_signal_endpoint_id_signal_endpoints_id_fk" FOREIGN KEY ("signal_endpoint_id") REFERENCES "public"."signal_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signals" ADD CONSTRAINT "signals_source_id_signal_endpoints_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."signal_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signals" ADD CONSTRAINT "signals_created_by_source_token_id_signal_endpoint_tokens_id_fk" FOREIGN KEY ("created_by_source_token_id") REFERENCES "public"."signal_endpoint_tokens"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "signal_endpoint_tokens_endpoint_idx" ON "signal_endpoint_tokens" USING btree ("signal_endpoint_id");--> statement-breakpoint
CREATE INDEX "signals_source_idx" ON "signals" USING btree ("source_id","id");--> statement-breakpoint
CREATE INDEX "signals_created_at_idx" ON "signals" USING btree ("created_at");