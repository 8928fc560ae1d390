ALTER TABLE "users" ADD COLUMN "email_unproven" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "sso_issuer" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "sso_subject" text;--> statement-breakpoint
CREATE UNIQUE INDEX "users_sso_identity_unique" ON "users" USING btree ("sso_issuer","sso_subject");--> statement-breakpoint
-- Accounts made through an invite link before this version: their holders typed their e-mail addresses.
UPDATE "users" SET "email_unproven" = true WHERE "id" IN (SELECT "user_id" FROM "public_signup_token_users");
