CREATE TABLE "sign_in_failures" (
	"user_id" integer NOT NULL,
	"address" text NOT NULL,
	"failures" integer NOT NULL,
	"locked_until" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "sign_in_failures_user_id_address_pk" PRIMARY KEY("user_id","address")
);
--> statement-breakpoint
ALTER TABLE "sign_in_failures" ADD CONSTRAINT "sign_in_failures_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sign_in_failures_updated_at" ON "sign_in_failures" USING btree ("updated_at");--> statement-breakpoint
ALTER TABLE "users" DROP COLUMN "locked_until";