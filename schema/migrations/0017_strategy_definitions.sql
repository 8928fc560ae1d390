CREATE TABLE "strategy_definitions" (
	"name" text PRIMARY KEY NOT NULL,
	"title" text,
	"display_name" text,
	"description" text,
	"parameters" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"built_in" boolean DEFAULT false NOT NULL,
	"deprecated" boolean DEFAULT false NOT NULL,
	"sort_order" integer DEFAULT 9999 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "strategy_definitions_sort_idx" ON "strategy_definitions" USING btree ("sort_order","name");--> statement-breakpoint
-- BEGIN hand-written data (carry over when regenerating this migration)
-- The built-in strategies Flagpost evaluates, with Unleash's display names, descriptions, parameters and sort orders.
-- userWithId is built in as in Unleash installs older than 7 (new ones lack it); the gradualRollout* ones are
-- deprecated there since 4.0 and are here too (existing uses keep working).
INSERT INTO "strategy_definitions" ("name", "display_name", "description", "parameters", "built_in", "deprecated", "sort_order") VALUES
  ('default', 'Standard', 'The standard strategy is strictly on / off for your entire userbase.', '[]', true, false, 0),
  ('flexibleRollout', 'Gradual rollout', 'Roll out to a percentage of your userbase, and ensure that the experience is the same for the user on each visit.',
    '[{"name":"rollout","type":"percentage","description":"","required":false},{"name":"stickiness","type":"string","description":"Used define stickiness. Possible values: default, userId, sessionId, random","required":true},{"name":"groupId","type":"string","description":"Used to define a activation groups, which allows you to correlate across feature toggles.","required":true}]',
    true, false, 1),
  ('userWithId', 'UserIDs', 'Enable the feature for a specific set of userIds.', '[{"name":"userIds","type":"list","description":"","required":false}]', true, false, 2),
  ('remoteAddress', 'IPs', 'Enable the feature for a specific set of IP addresses.', '[{"name":"IPs","type":"list","description":"List of IPs to enable the feature toggle for.","required":true}]', true, false, 3),
  ('applicationHostname', 'Hosts', 'Enable the feature for a specific set of hostnames.', '[{"name":"hostNames","type":"list","description":"List of hostnames to enable the feature toggle for.","required":false}]', true, false, 4),
  ('gradualRolloutRandom', NULL, 'Randomly activate the feature toggle. No stickiness.', '[{"name":"percentage","type":"percentage","description":"","required":false}]', true, true, 9999),
  ('gradualRolloutSessionId', NULL, 'Gradually activate feature toggle. Stickiness based on session id.', '[{"name":"percentage","type":"percentage","description":"","required":false},{"name":"groupId","type":"string","description":"Used to define a activation groups, which allows you to correlate across feature toggles.","required":true}]', true, true, 9999),
  ('gradualRolloutUserId', NULL, 'Gradually activate feature toggle for logged in users. Stickiness based on user id.', '[{"name":"percentage","type":"percentage","description":"","required":false},{"name":"groupId","type":"string","description":"Used to define a activation groups, which allows you to correlate across feature toggles.","required":true}]', true, true, 9999)
ON CONFLICT ("name") DO NOTHING;
--> statement-breakpoint
-- Names flags' strategies and default strategies already use, registered as custom definitions without parameters
-- (they were accepted before definitions existed), so that those strategies can still be written.
INSERT INTO "strategy_definitions" ("name", "description", "parameters")
SELECT DISTINCT n, 'Registered by Flagpost: already in use when strategy definitions were introduced', '[]'::jsonb FROM (
  SELECT "strategy_name" AS n FROM "feature_strategies"
  UNION SELECT "default_strategy"->>'name' FROM "project_environments" WHERE "default_strategy" IS NOT NULL
) used WHERE n IS NOT NULL
ON CONFLICT ("name") DO NOTHING;
-- END hand-written data
