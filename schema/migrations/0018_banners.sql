CREATE TABLE "banners" (
	"id" serial PRIMARY KEY NOT NULL,
	"message" text NOT NULL,
	"variant" text DEFAULT 'info' NOT NULL,
	"sticky" boolean DEFAULT false NOT NULL,
	"icon" text,
	"link" text,
	"link_text" text,
	"dialog_title" text,
	"dialog" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
