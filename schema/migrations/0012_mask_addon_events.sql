-- Integration parameters that are secrets (the webhook's url, authorization and customHeaders) were stored in clear
-- in addon-config-* events (only authorization was masked). Events are history, but a secret is not: the copies in
-- the event log and in the delivery log's events are masked as the application now masks them when it writes them.
CREATE FUNCTION "pg_temp"."flagpost_mask_addon"("config" jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN "config" IS NULL OR jsonb_typeof("config") <> 'object' OR jsonb_typeof("config"->'parameters') IS DISTINCT FROM 'object' THEN "config"
    ELSE jsonb_set("config", '{parameters}', (
      SELECT coalesce(jsonb_object_agg(p.key, CASE WHEN p.key IN ('url', 'authorization', 'customHeaders') AND p.value NOT IN ('""'::jsonb, 'null'::jsonb) THEN '"*****"'::jsonb ELSE p.value END), '{}'::jsonb)
      FROM jsonb_each("config"->'parameters') AS p
    ))
  END
$$;
--> statement-breakpoint
UPDATE "events" SET "data" = "pg_temp"."flagpost_mask_addon"("data"), "pre_data" = "pg_temp"."flagpost_mask_addon"("pre_data")
WHERE "type" IN ('addon-config-created', 'addon-config-updated', 'addon-config-deleted');
--> statement-breakpoint
UPDATE "integration_events" SET "event" = jsonb_set(jsonb_set("event", '{data}', coalesce("pg_temp"."flagpost_mask_addon"("event"->'data'), 'null'::jsonb)), '{preData}', coalesce("pg_temp"."flagpost_mask_addon"("event"->'preData'), 'null'::jsonb))
WHERE "event"->>'type' IN ('addon-config-created', 'addon-config-updated', 'addon-config-deleted');
