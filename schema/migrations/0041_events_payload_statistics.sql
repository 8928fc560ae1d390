-- No query compares an event's data or pre_data as a whole (filters read fields with ->>, the event search its
-- own lowercased text, whose index keeps its statistics), so ANALYZE stops sampling them: it was most of an
-- events ANALYZE (comparing 30,000 sampled jsonb values), which autovacuum repeats every 10 % of new events.
ALTER TABLE "events" ALTER COLUMN "data" SET STATISTICS 0, ALTER COLUMN "pre_data" SET STATISTICS 0;
