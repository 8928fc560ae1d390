// The migration that made tags a registry keeps the tags flags already had: it registers their types and tags
// (and the built-in `simple`), so the foreign keys it adds hold for the data of an older version.
import { describe, expect, it } from 'vitest'
import { migrateAcross } from '../helpers/migrate-across.js'

describe('the tag registry migration', () => {
  it('registers every tag type and tag already on a flag, and simple', async () => {
    // Data of an older version, which the API of this one can no longer make (tags of unregistered types).
    const older = `
      insert into features (name, project, type, created_at, created_by) values ('old-a', 'default', 'release', now(), 'admin'), ('old-b', 'default', 'release', now(), 'admin');
      insert into feature_tags (feature_name, tag_type, tag_value) values ('old-a', 'team', 'payments'), ('old-b', 'team', 'payments'), ('old-b', 'simple', 'beta'), ('old-b', 'region', 'eu');`
    await migrateAcross('_tag_types', older, async (client) => {
      expect((await client.query('select name from tag_types order by name')).rows).toEqual([{ name: 'region' }, { name: 'simple' }, { name: 'team' }])
      expect((await client.query('select type, value from tags order by type, value')).rows).toEqual([
        { type: 'region', value: 'eu' },
        { type: 'simple', value: 'beta' },
        { type: 'team', value: 'payments' },
      ])
      expect((await client.query('select count(*)::int as n from feature_tags')).rows).toEqual([{ n: 4 }])
    })
  }, 60_000)
})
