CREATE TABLE "public_signup_token_users" (
	"token_id" integer NOT NULL,
	"user_id" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "public_signup_token_users_token_id_user_id_pk" PRIMARY KEY("token_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "public_signup_tokens" (
	"id" serial PRIMARY KEY NOT NULL,
	"secret_hash" text NOT NULL,
	"display_secret" text NOT NULL,
	"name" text NOT NULL,
	"role_id" integer NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	CONSTRAINT "public_signup_tokens_secret_hash_unique" UNIQUE("secret_hash")
);
--> statement-breakpoint
ALTER TABLE "public_signup_token_users" ADD CONSTRAINT "public_signup_token_users_token_id_public_signup_tokens_id_fk" FOREIGN KEY ("token_id") REFERENCES "public"."public_signup_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "public_signup_token_users" ADD CONSTRAINT "public_signup_token_users_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "public_signup_tokens" ADD CONSTRAINT "public_signup_tokens_role_id_roles_id_fk" FOREIGN KEY ("role_id") REFERENCES "public"."roles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "public_signup_token_users_user_idx" ON "public_signup_token_users" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "public_signup_tokens_display_secret_idx" ON "public_signup_tokens" USING btree ("display_secret");