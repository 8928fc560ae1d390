import { sql } from 'drizzle-orm'
import { queryRows, type Db } from '../db.js'
import { configurationEventCondition, NON_CONFIGURATION_EVENT_TYPES } from '../../schema/events.js'
import type { EventType } from '../events/types.js'

// Every type the SDK revision skips is one of the event catalogue's (a misspelt name would skip nothing).
NON_CONFIGURATION_EVENT_TYPES satisfies readonly EventType[]

/**
 * The configuration revision SDK payloads are cached under. Every change to a flag, strategy, variant,
 * segment, dependency, tag or environment writes an event (ids increase), so the newest event id moves
 * whenever a payload may have changed.
 *
 * The newest id alone is not enough on a real Postgres with concurrent writers: a transaction can take
 * event id 41, another take 42 and commit first, and a payload built in between (revision 42) would
 * miss change 41 for good. So the key also covers the newest 256 visible ids (their lowest id and how
 * many there are): a late commit inside that window changes it. Missing one would take 256 other events
 * committing while one write transaction sits between its event insert and its commit.
 */
export interface Revision {
  /** The newest event id (0 with no events). */
  id: number
  /** What payloads are keyed by: `id.low.count` of the newest visible event ids. */
  key: string
  low: number
  count: number
}

const WINDOW = 256

/** The revision as one JSON column (`[id, low, count]`), to read along with other values in one statement. */
export const revisionColumn = sql`(select json_build_array(coalesce(max(id), 0)::text, coalesce(min(id), 0)::text, count(*)) from (select id from events order by id desc limit ${sql.raw(String(WINDOW))}) newest)`

/**
 * The SDK revision: the same over the events that may change what SDKs and the playground evaluate (not those of
 * NON_CONFIGURATION_EVENT_TYPES), read from their partial index. A Viewer's personal access token, a sign-up, an SDK's
 * registration or a change request's review moves the event log but not it, so payloads are not read again for them.
 */
export const sdkRevisionColumn = sql`(select json_build_array(coalesce(max(id), 0)::text, coalesce(min(id), 0)::text, count(*)) from (select id from events where ${configurationEventCondition} order by id desc limit ${sql.raw(String(WINDOW))}) newest)`

export function revisionOf(column: [string, string, number] | undefined): Revision {
  const id = Number(column?.[0] ?? 0)
  const low = Number(column?.[1] ?? 0)
  const count = Number(column?.[2] ?? 0)
  return { id, low, count, key: `${id}.${low}.${count}` }
}

export async function readRevision(db: Db): Promise<Revision> {
  const [row] = await queryRows<{ revision: [string, string, number] }>(db, sql`select ${sdkRevisionColumn} as revision`)
  return revisionOf(row?.revision)
}

/** Revisions only move forward: a newer one has a higher id, or the same id and more of the window committed. */
export function isNewer(a: Revision, b: Revision): boolean {
  if (a.id !== b.id) return a.id > b.id
  if (a.low !== b.low) return a.low > b.low
  return a.count > b.count
}

/**
 * The current revision, read at most once per `ttlMs` (and again right after a write through this
 * process, see `invalidate`), so a poll that changes nothing does not touch the database.
 *
 * With `staleMs`, a revision past its ttl is still `known` for that much longer: the SDK routes answer
 * from it and check it after the response (stale-while-revalidate, on Workers).
 */
export class RevisionMemo {
  private value: Revision | undefined
  private readAt = 0
  private reading: Promise<Revision> | undefined
  private checkClaimedAt = -Infinity
  /** Bumped by `invalidate`: a read that started before a write must not be remembered after it. */
  generation = 0

  constructor(
    private readonly ttlMs: number,
    private readonly shareInFlight: boolean,
    private readonly now: () => number = Date.now,
    private readonly staleMs = 0,
  ) {}

  async current(db: Db): Promise<Revision> {
    if (this.value && this.now() - this.readAt < this.ttlMs) return this.value
    if (this.shareInFlight && this.reading) return this.reading
    const generation = this.generation
    const reading = readRevision(db).then((revision) => {
      this.observe(revision, generation)
      return this.value && !isNewer(revision, this.value) ? this.value : revision
    })
    if (this.shareInFlight) this.reading = reading.finally(() => (this.reading = undefined))
    return reading
  }

  /**
   * The remembered revision, without reading: `fresh` within `ttlMs` of its read, then known but due for
   * a check for `staleMs` more. Undefined when never read, forgotten by a write, or older than that.
   */
  known(): { revision: Revision; fresh: boolean } | undefined {
    if (!this.value) return undefined
    const age = this.now() - this.readAt
    if (age >= this.ttlMs + this.staleMs) return undefined
    return { revision: this.value, fresh: age < this.ttlMs }
  }

  /** Claims the one background check per `ttlMs` (a failed check is not retried before then). */
  claimCheck(): boolean {
    const now = this.now()
    if (now - this.checkClaimedAt < this.ttlMs) return false
    this.checkClaimedAt = now
    return true
  }

  /** Takes a revision read elsewhere (with a payload) when it is newer than the remembered one. */
  observe(revision: Revision, generation: number): void {
    if (generation !== this.generation) return
    if (!this.value || isNewer(revision, this.value)) this.value = revision
    this.readAt = this.now()
  }

  invalidate(): void {
    this.generation++
    this.value = undefined
    this.readAt = 0
    this.reading = undefined
  }
}
