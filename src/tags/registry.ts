import { sql } from 'drizzle-orm'
import { tags as tagsTable, tagTypes } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import { validationError } from '../core/errors.js'
import type { Tag } from './schemas.js'

/** What every writer that may create tags uses: the registry as read, the 400 of an unknown type, the creation lock. */

export const tagKey = (t: Tag) => JSON.stringify([t.type, t.value])

export const noSuchTagType = (type: string) => validationError(`Tag type '${type}' does not exist`, [{ path: 'body.type', message: `tag type ${type} does not exist` }])

/** Of the tags (placeholder `tags`, JSON), which exist, and which types exist. */
export const registryOf = (db: Db, list: Tag[]) =>
  queryRows<{ type: string; value: string; tagExists: boolean; typeExists: boolean }>(
    db,
    sql`select x.type, x.value, exists (select from ${tagsTable} t where t.type = x.type and t.value = x.value) as "tagExists",
        exists (select from ${tagTypes} tt where tt.name = x.type) as "typeExists"
      from jsonb_to_recordset(${JSON.stringify(list)}::jsonb) as x (type text, value text)`,
  )

/**
 * Serializes the creation of a tag (by its type and value) between writers: the second one's checked statement then
 * sees the first's tag, so exactly one records `tag-created`. Held to the end of the batch it is the first statement of.
 */
export const tagCreationLocks = (db: Db, list: Tag[]) =>
  db.execute(sql`select count(pg_advisory_xact_lock(hashtextextended('tag:' || k, 0))) from (select unnest(${sql.param(list.map(tagKey))}::text[]) as k order by 1) keys`)

/**
 * SQL true while the tags (JSON, `type` and `value`) are all still absent and their types present: what a write that
 * creates them (and records their `tag-created`) decided from.
 */
export const tagsStillNew = (list: unknown) =>
  sql<boolean>`not exists (select from jsonb_to_recordset(${list}::jsonb) as n (type text, value text)
    where exists (select from ${tagsTable} t where t.type = n.type and t.value = n.value) or not exists (select from ${tagTypes} tt where tt.name = n.type))`
