ALTER TABLE "users" ADD COLUMN "password_set_by_user" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "sso_issuer" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "sso_subject" text;--> statement-breakpoint
CREATE UNIQUE INDEX "users_sso_identity_unique" ON "users" USING btree ("sso_issuer","sso_subject");--> statement-breakpoint
-- Who chose an existing password is not known: every account with one is treated as chosen by its holder (the safe side).
UPDATE "users" SET "password_set_by_user" = true WHERE "password_hash" IS NOT NULL;
