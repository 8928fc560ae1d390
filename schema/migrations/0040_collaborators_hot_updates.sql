-- Every write moves its collaborator's latest_event_id; with no index on it, that update is a HOT update
-- (no index entry, less WAL). A flag's collaborators are found by the unique index and sorted in memory.
DROP INDEX IF EXISTS "feature_collaborators_latest_idx";
