// The migration that made strategy types a registry keeps the strategies flags and default strategies already had
// writable: it registers their names as custom types (and seeds the built-in ones).
import { describe, expect, it } from 'vitest'
import { migrateAcross } from '../helpers/migrate-across.js'

describe('the strategy definitions migration', () => {
  it('registers every strategy name already used by a flag or a default strategy, next to the built-in ones', async () => {
    // Data of an older version, which accepted any strategy name.
    const older = `
      insert into features (name, project, type, created_at, created_by) values ('old-a', 'default', 'release', now(), 'admin');
      insert into feature_environments (feature_name, environment) values ('old-a', 'development');
      insert into feature_strategies (id, feature_name, environment, strategy_name, sort_order) values
        (gen_random_uuid(), 'old-a', 'development', 'legacyThing', 0), (gen_random_uuid(), 'old-a', 'development', 'default', 1);
      update project_environments set default_strategy = '{"name": "olderThing"}' where project_id = 'default' and environment_name = 'development';`
    await migrateAcross('_strategy_definitions', older, async (client) => {
      const rows = (await client.query<{ name: string; built_in: boolean }>('select name, built_in from strategy_definitions order by built_in, name')).rows
      expect(rows.filter((r) => !r.built_in).map((r) => r.name)).toEqual(['legacyThing', 'olderThing'])
      expect(rows.filter((r) => r.built_in)).toHaveLength(8)
    })
  }, 60_000)
})
