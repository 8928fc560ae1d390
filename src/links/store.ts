import { sql } from 'drizzle-orm'
import { featureLinks, features, featureTags } from '../../schema/index.js'
import { statement, untilUnchanged, type Db } from '../db.js'
import { noAccess, notFound, validationError } from '../core/errors.js'
import type { Author } from '../core/principal.js'
import { eventsStatement } from '../events/store.js'
import type { EventTag, NewEvent } from '../events/types.js'
import { MAX_LINK_URL_LENGTH, MAX_LINKS_PER_FLAG, type LinkInput } from './schemas.js'

export interface FeatureLink {
  id: string
  url: string
  title: string | null
}

const p = (name: string) => sql.placeholder(name)

/**
 * The URL as stored and shown, or a 400. As Unleash: https:// is assumed when no scheme is given, credentials
 * are dropped, and so are a leading `www.` and a trailing slash. Only http(s): a link is opened by others, so a
 * `javascript:` or `data:` URL (which Unleash keeps) is refused.
 */
export function normalizedLinkUrl(raw: string): string {
  const given = raw.trim()
  const refuse = (why: string) => validationError(`Invalid URL: ${raw.slice(0, 100)} (${why})`, [{ path: 'body.url', message: why }])
  // A scheme named (`javascript:`, `data:`, `mailto:`; not a host's port, `example.com:8080`) must be http(s).
  const scheme = /^([a-z][a-z\d+.-]*):(?!\d)/i.exec(given)?.[1]?.toLowerCase()
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') throw refuse('only http and https links are allowed')
  // A named http(s) scheme is read as browsers read it (`http:\\host`, `http:host` are http://host).
  const withScheme = given.startsWith('//') ? `https:${given}` : scheme !== undefined ? given : `https://${given}`
  let url: URL
  try {
    url = new URL(withScheme)
  } catch {
    throw refuse('not a URL')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('only http and https links are allowed')
  if (!url.hostname) throw refuse('a link needs a host')
  url.username = ''
  url.password = ''
  if (/^www\.(?!www\.)[a-z\d-]{1,63}\.[a-z\d.-]{2,63}$/.test(url.hostname)) url.hostname = url.hostname.slice(4)
  url.pathname = url.pathname.replace(/\/+$/, '')
  let href = url.href
  if (url.pathname === '/' && !url.search && !url.hash) href = href.replace(/\/$/, '')
  if (href.length > MAX_LINK_URL_LENGTH) throw refuse(`at most ${MAX_LINK_URL_LENGTH} characters`)
  return href
}

interface FlagForLinks {
  tags: EventTag[]
  links: FeatureLink[]
}

/** The live flag of the project, with its tags (for the events) and links. */
const flagForLinks = statement<FlagForLinks>('flagpost_flag_for_links', () => sql`
  select coalesce((select json_agg(json_build_object('type', t.tag_type, 'value', t.tag_value) order by t.tag_type, t.tag_value) from ${featureTags} t where t.feature_name = f.name), '[]') as tags,
    coalesce((select json_agg(json_build_object('id', l.id, 'url', l.url, 'title', l.title) order by l.created_at, l.id) from ${featureLinks} l where l.feature_name = f.name), '[]') as links
  from ${features} f where f.name = ${p('feature')} and f.project = ${p('project')} and f.archived_at is null`)

async function readFlag(db: Db, projectId: string, featureName: string): Promise<FlagForLinks> {
  const [flag] = await flagForLinks(db, { feature: featureName, project: projectId })
  if (!flag) throw notFound(`Could not find feature flag ${featureName} in project ${projectId}`)
  return flag
}

function linkOf(flag: FlagForLinks, linkId: string) {
  const link = flag.links.find((l) => l.id === linkId)
  if (!link) throw notFound(`Could not find link with id ${linkId}`)
  return link
}

/** The flag is still live in the project when the change is written (archiving it between read and write stops it). */
const liveFlag = sql`exists (select from ${features} f where f.name = ${p('feature')} and f.project = ${p('project')} and f.archived_at is null)`
/** The link is as it was read. */
const asRead = sql`id = ${p('id')} and feature_name = ${p('feature')} and url = ${p('oldUrl')} and title is not distinct from ${p('oldTitle')}::text`

/**
 * A flag's links are part of what its GET shows, so a change of them moves the flag's version on (as every change
 * of a flag does: src/flags/lock.ts), once the link change was made.
 */
const bumped = sql`update ${features} set version = version + 1 where name in (select feature_name from w0) returning name`

const addStatement = eventsStatement('flagpost_add_feature_link', {
  alongside: [
    sql`insert into ${featureLinks} (id, feature_name, slot, url, title, created_at)
      select ${p('id')}, ${p('feature')}, free.slot, ${p('url')}, ${p('title')}::text, ${p('createdAt')}::timestamptz
      from (select g::smallint as slot from generate_series(0, ${MAX_LINKS_PER_FLAG - 1}) g
        where g not in (select slot from ${featureLinks} where feature_name = ${p('feature')}) order by g limit 1) free
      where ${liveFlag}
      on conflict do nothing returning feature_name`,
    bumped,
  ],
  guarded: true,
})
const updateStatement = eventsStatement('flagpost_update_feature_link', {
  alongside: [sql`update ${featureLinks} set url = ${p('url')}, title = ${p('title')}::text where ${asRead} and ${liveFlag} returning feature_name`, bumped],
  guarded: true,
})
const removeStatement = eventsStatement('flagpost_remove_feature_link', {
  alongside: [sql`delete from ${featureLinks} where ${asRead} and ${liveFlag} returning feature_name`, bumped],
  guarded: true,
})

const what = (featureName: string) => `The links of feature flag ${featureName}`

/**
 * POST …/features/{featureName}/link: a link in the flag's first free slot (chosen by the statement), with
 * `feature-link-added`. At most 10 per flag (403, as Unleash). An add that found no free slot, or lost it to a
 * concurrent add, reads again.
 */
export async function addLink(db: Db, caller: Author, projectId: string, featureName: string, input: LinkInput): Promise<FeatureLink> {
  const url = normalizedLinkUrl(input.url)
  const title = input.title ?? null
  return untilUnchanged(what(featureName), async () => {
    const flag = await readFlag(db, projectId, featureName)
    if (flag.links.length >= MAX_LINKS_PER_FLAG) throw noAccess(`Too many links (${MAX_LINKS_PER_FLAG}) exist for this feature`)
    const link = { id: crypto.randomUUID(), url, title }
    const event: NewEvent = { type: 'feature-link-added', project: projectId, featureName, data: { url, title }, tags: flag.tags }
    const { written } = await addStatement(db, caller.actor, caller.now, [event], { id: link.id, feature: featureName, project: projectId, url, title })
    return written > 0 ? link : undefined
  })
}

/** PUT …/link/{linkId}: a link of this flag (404 otherwise) gets a new URL and title, with `feature-link-updated`. */
export async function updateLink(db: Db, caller: Author, projectId: string, featureName: string, linkId: string, input: LinkInput): Promise<void> {
  const url = normalizedLinkUrl(input.url)
  const title = input.title ?? null
  await untilUnchanged(what(featureName), async () => {
    const flag = await readFlag(db, projectId, featureName)
    const before = linkOf(flag, linkId)
    const event: NewEvent = { type: 'feature-link-updated', project: projectId, featureName, data: { url, title }, preData: { url: before.url, title: before.title }, tags: flag.tags }
    const { written } = await updateStatement(db, caller.actor, caller.now, [event], { id: linkId, feature: featureName, project: projectId, oldUrl: before.url, oldTitle: before.title, url, title })
    return written > 0 || undefined
  })
}

/** DELETE …/link/{linkId}: a link of this flag (404 otherwise) goes, with `feature-link-removed`. */
export async function removeLink(db: Db, caller: Author, projectId: string, featureName: string, linkId: string): Promise<void> {
  await untilUnchanged(what(featureName), async () => {
    const flag = await readFlag(db, projectId, featureName)
    const before = linkOf(flag, linkId)
    const event: NewEvent = { type: 'feature-link-removed', project: projectId, featureName, preData: { url: before.url, title: before.title }, tags: flag.tags }
    const { written } = await removeStatement(db, caller.actor, caller.now, [event], { id: linkId, feature: featureName, project: projectId, oldUrl: before.url, oldTitle: before.title })
    return written > 0 || undefined
  })
}

/** SQL of a flag's links as its GET shows them (`flag`: SQL naming the flag), oldest first. */
export const linksOf = (flag: ReturnType<typeof sql.raw>) =>
  sql`coalesce((select json_agg(json_build_object('id', l.id, 'url', l.url, 'title', l.title) order by l.created_at, l.id) from ${featureLinks} l where l.feature_name = ${flag}), '[]')`
