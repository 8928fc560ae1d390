-- This instance's id (GET /api/admin/instance-admin/statistics), made once at its first start.
INSERT INTO "settings" ("name", "content") VALUES ('instance', jsonb_build_object('id', gen_random_uuid()::text)) ON CONFLICT ("name") DO NOTHING;
