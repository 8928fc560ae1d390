-- Seed data every Flagpost database starts with. Ids of the built-in roles match Unleash's.
INSERT INTO "roles" ("id", "name", "type", "description") VALUES
  (1, 'Admin', 'root', 'Users with the root role Admin can do anything.'),
  (2, 'Editor', 'root', 'Users with the root role Editor can create projects and change flags in the projects they may edit.'),
  (3, 'Viewer', 'root', 'Users with the root role Viewer can read everything but change nothing.'),
  (4, 'Owner', 'project', 'Users with the project role Owner have every permission in the project.'),
  (5, 'Member', 'project', 'Users with the project role Member can change flags in the project.')
ON CONFLICT DO NOTHING;
--> statement-breakpoint
SELECT setval(pg_get_serial_sequence('roles', 'id'), (SELECT max("id") FROM "roles"));
--> statement-breakpoint
INSERT INTO "environments" ("name", "type", "enabled", "protected", "sort_order") VALUES
  ('development', 'development', true, false, 100),
  ('production', 'production', true, false, 200)
ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO "projects" ("id", "name", "description", "mode", "default_stickiness") VALUES
  ('default', 'Default', 'Default project', 'open', 'default')
ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO "project_environments" ("project_id", "environment_name") VALUES
  ('default', 'development'),
  ('default', 'production')
ON CONFLICT DO NOTHING;
