// Scrubs a copy of the production database before a preview (unreviewed code on a public URL) runs on it:
// no production credential works there, no integration delivers from it, and it holds no passwords, no secrets
// and no personal data (people's names and e-mail addresses, SDKs' addresses, signal payloads). Idempotent.
// `DATABASE_URL=… tsx scripts/scrub-preview.ts`; with PREVIEW_ADMIN_TOKEN (`*:*.<secret>`, a secret valid for
// previews only) that admin token is created after.
import { sql } from 'drizzle-orm'
import { pathToFileURL } from 'node:url'
import { bootstrapAdminTokens } from '../src/api-tokens/store.js'
import { queryRows, type Db } from '../src/db.js'
import { searchTextOf } from '../src/events/text-index.js'
import { events, eventSearchState, eventSearchText } from '../schema/index.js'
import { openPg } from '../src/db-node.js'

/**
 * What the scrub does with one table: keeps it as it is, empties it, or rewrites the columns named (each to the SQL
 * expression given, over the row as it was). test/security-preview-scrub.test.ts holds this list to every table of
 * the database's catalog: a table missing from it fails the test, so a new table is never copied unexamined.
 */
export type TableScrub =
  | { action: 'keep'; why: string }
  | { action: 'empty'; why: string }
  | { action: 'rewrite'; columns: Record<string, string>; why: string }

/** A person's name or e-mail address, a username, or any e-mail address in a text: replaced by a placeholder. */
const person = (column: string) => `pg_temp.preview_text(${column})`
/** The same, for every string inside a JSON document. */
const personJson = (column: string) => `pg_temp.preview_json(${column})`
const authors = { created_by: person('created_by') }

/**
 * Every table, what a preview needs of it, and why. Emptied tables are emptied in this order (the tables pointing at
 * others first); rewritten ones are rewritten after, `users` last (the placeholders are read from the users as they were).
 */
export const PREVIEW_SCRUB = {
  // Credentials: each works against the preview's app as it does against production's.
  sessions: { action: 'empty', why: "browser sessions (and single sign-on's ID tokens): a production cookie would sign in" },
  sign_in_failures: { action: 'empty', why: "failed sign-ins by account and client address: people's addresses, and production's lockouts" },
  api_tokens: { action: 'empty', why: 'API tokens and personal access tokens: production secrets (PREVIEW_ADMIN_TOKEN makes a preview one)' },
  reset_tokens: { action: 'empty', why: 'invitations and password-reset links: a production link would set a password' },
  reset_email_claims: { action: 'empty', why: 'when each account was last e-mailed a reset link: production\'s once-a-minute limits' },
  public_signup_token_users: { action: 'empty', why: 'who signed up with which invite link: goes with the links' },
  public_signup_tokens: { action: 'empty', why: 'public invite links: a production link would sign a stranger up' },
  signals: { action: 'empty', why: 'signal payloads: whatever outside systems sent, personal data included' },
  signal_endpoint_tokens: { action: 'empty', why: "signal endpoints' tokens: a production token would post signals that run actions" },
  action_set_events: { action: 'empty', why: "the action runs' log: each holds the signal's payload" },
  // Integrations: a preview delivers nowhere.
  integration_outbox: { action: 'empty', why: 'queued deliveries to production integrations' },
  integration_events: { action: 'empty', why: "the delivery log: production integrations' answers" },
  addons: { action: 'empty', why: "integrations: their URLs, secrets and headers are production's" },
  // What SDKs reported, and caches that would not hold after the rewrite.
  client_metrics_inbox: { action: 'empty', why: "SDK reports not yet folded: SDKs' addresses and token names" },
  event_count_cache: { action: 'empty', why: 'counts per event filter (authors included): filters name people, and the authors are rewritten' },
  event_search_text: { action: 'empty', why: "the event search's copy of each event's text: the names and e-mails the events held before their rewrite (copied again from the rewritten events at the scrub's end)" },

  // People and what names them.
  events: {
    action: 'rewrite',
    columns: {
      created_by: person('created_by'),
      // The summary names the author in bold (events/describe.ts), by the name created_by held.
      summary: person(`replace(summary, '**' || created_by || '**', '**' || ${person('created_by')} || '**')`),
      data: personJson('data'),
      pre_data: personJson('pre_data'),
    },
    why: "the audit log stays (a preview shows history); its authors and the people its data names do not (users' events hold e-mails and names)",
  },
  event_search_state: { action: 'rewrite', columns: { indexed_through: '0', candidate_id: 'null', candidate_xmax: 'null' }, why: 'how far the copy of events\' text goes: emptied above, so from the first event again (set to the newest at the scrub\'s end)' },
  feature_collaborators: { action: 'rewrite', columns: authors, why: "a flag's authors: the events' authors, rewritten alike (rows that become one are merged)" },
  features: { action: 'rewrite', columns: authors, why: 'flags stay (a preview evaluates them as production does); their authors do not' },
  segments: { action: 'rewrite', columns: authors, why: 'segments stay; their authors do not' },
  groups: { action: 'rewrite', columns: authors, why: 'groups and their roles stay (permissions behave as in production); their authors do not' },
  group_users: { action: 'rewrite', columns: authors, why: "memberships stay; who added them does not" },
  group_roles: { action: 'rewrite', columns: authors, why: "groups' project roles stay; who granted them does not" },
  change_requests: { action: 'rewrite', columns: authors, why: 'change requests stay; their authors do not' },
  change_request_changes: { action: 'rewrite', columns: authors, why: 'the changes stay; their authors do not' },
  change_request_approvals: { action: 'rewrite', columns: authors, why: 'approvals stay; their authors do not' },
  change_request_schedules: { action: 'rewrite', columns: authors, why: 'schedules stay; their authors do not' },
  client_applications: { action: 'rewrite', columns: authors, why: 'applications stay; who first reported them is a token name, rewritten like any author' },
  client_instances: {
    action: 'rewrite',
    columns: { client_ip: 'null', instance_id: `case when instance_id ~ '^instance-[0-9a-f]{32}$' then instance_id else 'instance-' || md5(instance_id) end` },
    why: "SDK instances stay; their addresses and ids do not (SDKs' default ids are `<os user>-<host>-<pid>`: a person and a machine)",
  },
  settings: {
    action: 'rewrite',
    columns: { content: `case when name = 'oidc' then (content - 'secret') || '{"enabled": false}'::jsonb else content end` },
    why: "single sign-on is production's client: its secret goes and it is switched off; password sign-in's setting stays",
  },
  users: {
    action: 'rewrite',
    columns: {
      email: `case when email is null then null else 'user-' || id || '@preview.invalid' end`,
      username: `case when username is null then null else 'user-' || id end`,
      name: `case when name is null then null else 'User ' || id end`,
      password_hash: 'null',
      login_attempts: '0',
      sso_issuer: 'null',
      sso_subject: 'null',
    },
    why: "accounts and their roles stay (a preview's admin can act as anyone's role); names, usernames, e-mails, passwords and single sign-on identities (a provider's subject may be an address) do not",
  },

  // What a preview is for: the flags and everything they are made of, as production has them.
  roles: { action: 'keep', why: 'roles: no personal data' },
  role_permissions: { action: 'keep', why: "custom roles' permissions" },
  project_members: { action: 'keep', why: "users' project roles, by user id" },
  projects: { action: 'keep', why: 'projects' },
  project_environments: { action: 'keep', why: "projects' environments and their change-request settings" },
  kept_change_request_settings: { action: 'keep', why: 'the change-request settings of environments taken out of a project, restored when one is added back' },
  environments: { action: 'keep', why: 'environments' },
  feature_types: { action: 'keep', why: 'flag types' },
  feature_environments: { action: 'keep', why: "flags' switches and variants" },
  feature_strategies: { action: 'keep', why: "flags' strategies (targeting values are production's, so that a preview evaluates as production)" },
  feature_strategy_segments: { action: 'keep', why: "strategies' segments" },
  feature_tags: { action: 'keep', why: "flags' tags" },
  tags: { action: 'keep', why: 'tags' },
  tag_types: { action: 'keep', why: 'tag types' },
  feature_dependencies: { action: 'keep', why: "flags' dependencies" },
  feature_links: { action: 'keep', why: "flags' links (URLs and titles people chose to show everyone who reads the flag)" },
  feature_lifecycles: { action: 'keep', why: "flags' lifecycle stages" },
  favorite_features: { action: 'keep', why: 'favorites, by principal key (`user:<id>`, `token:<id>`)' },
  favorite_projects: { action: 'keep', why: 'favorites, by principal key' },
  context_fields: { action: 'keep', why: 'context fields' },
  strategy_definitions: { action: 'keep', why: 'strategy definitions' },
  banners: { action: 'keep', why: 'banners' },
  signal_endpoints: { action: 'keep', why: 'signal endpoints (names and descriptions; their tokens are emptied)' },
  action_sets: { action: 'keep', why: "action sets (filters and actions); with no endpoint token a preview's endpoint takes no signal" },
  client_metrics_hourly: { action: 'keep', why: 'usage counts per flag, application and hour' },
  client_metrics_variants_hourly: { action: 'keep', why: 'variant counts per flag, application and hour' },
  client_metrics_daily: { action: 'keep', why: 'usage counts per flag, application and day' },
  client_metrics_variants_daily: { action: 'keep', why: 'variant counts per flag, application and day' },
  unknown_flags: { action: 'keep', why: 'flag names SDKs reported that no flag has, per application: no personal data' },
  user_feedback: { action: 'keep', why: "each user's answers to the console's feedback prompts, by user id: no text" },
  user_splash: { action: 'keep', why: 'which splash screens each user has seen, by user id' },
  client_impact_metrics: { action: 'keep', why: "applications' impact metrics" },
} satisfies Record<string, TableScrub>

/**
 * An e-mail address inside a text, any script (`jöhn.dœ@exämple.com`, `o'brien@example.com`, `first!last@example.com`):
 * a local part of any characters but spaces, controls and the ones that cannot stand unquoted in an address, `@`, then
 * dot-separated labels of letters, digits (any script) and hyphens. Greedy, so `joann@x.com` is one address, never
 * `ann@x.com`; a trailing full stop is not part of it. Letters are the database's (its ctype): under a "C" ctype every
 * character beyond ASCII counts as a letter, so such addresses are still found whole.
 */
const EMAIL_PATTERN = `[^\\s[:cntrl:]@<>()\\[\\]\\\\,;:"]+@(?:[^\\s[:punct:][:cntrl:]]|-)+(?:\\.(?:[^\\s[:punct:][:cntrl:]]|-)+)+`

/**
 * What a placeholder looks like (in lower case): a user's (`user-<id>@preview.invalid`, `user-<id>`, `User <id>`) or
 * another address's (`person-<hash>@preview.invalid`). Only these: `john.smith@preview.invalid` is a name.
 */
const PLACEHOLDER = `^(user-[0-9]+(@preview\\.invalid)?|user [0-9]+|person-[0-9a-f]{12}@preview\\.invalid)$`

/**
 * The functions the rewrites use, for this transaction only (pg_temp): `preview_text` turns a user's e-mail, username or
 * name (the whole text, any case) into that user's placeholder, and any e-mail address inside the text into its user's
 * placeholder, or, when no user has it, a placeholder of its own (a hash: one address, one placeholder); `preview_known`
 * turns only users' addresses inside a text into their placeholders; `preview_json` and `preview_known_json` do the same
 * to every string (and every key's addresses) of a document. A placeholder is never looked up: a user who holds another's
 * placeholder (`user-1@preview.invalid` as their own address) is not personal data, and mapping it would move what the
 * scrub already rewrote to that other user.
 */
const FUNCTIONS = [
  `create temp table preview_people (original text primary key, replacement text not null) on commit drop`,
  `insert into preview_people (original, replacement)
     select lower(original), replacement from (
       select id, 1 as k, email as original, 'user-' || id || '@preview.invalid' as replacement from users where email is not null
       union all select id, 2, username, 'user-' || id from users where username is not null
       union all select id, 3, name, 'User ' || id from users where name is not null
       -- What users were called before (a changed name or address, a deleted user's username): their accounts' events say.
       union all select id, k, original, case k when 1 then 'user-' || id || '@preview.invalid' when 2 then 'user-' || id else 'User ' || id end
       from (
         select (d->>'id')::int as id, f.k, d->>f.field as original
         from events e cross join lateral (values (e.data), (e.pre_data)) v(d)
         cross join (values (1, 'email'), (2, 'username'), (3, 'name')) f(k, field)
         where (e.type like 'user-%' or e.type like 'service-account-%') and jsonb_typeof(d) = 'object' and d->>'id' ~ '^[0-9]{1,9}$'
       ) former where original is not null and original <> ''
     ) p where lower(original) !~ $p$${PLACEHOLDER}$p$ order by k, id
   on conflict (original) do nothing`,
  // One address found in a text: the longest known address it ends with, starting at its start or after a character
  // that does not go on an address (a quote, an equals sign…): 'o'brien@x.com is o'brien's, user=ann@x.com is ann's,
  // joann@x.com and x.ann@x.com are not ann's; a placeholder stays. Else, with generic, a placeholder of its own.
  `create function pg_temp.preview_address(m text, generic boolean) returns text language plpgsql stable as $fn$
   declare
     r text;
     i int;
   begin
     for i in 1 .. position('@' in m) - 1 loop
       if i = 1 or substr(m, i - 1, 1) !~ '[[:alnum:]._%+-]' then
         select replacement into r from pg_temp.preview_people where original = lower(substr(m, i));
         if found then return left(m, i - 1) || r; end if;
         if lower(substr(m, i)) ~ $p$${PLACEHOLDER}$p$ then return m; end if;
       end if;
     end loop;
     if generic then return 'person-' || left(md5(lower(m)), 12) || '@preview.invalid'; end if;
     return m;
   end $fn$`,
  // Every address inside a text, each in its place (the text is split around them and put back together).
  `create function pg_temp.preview_addresses(v text, generic boolean) returns text language plpgsql stable as $fn$
   declare
     pieces text[];
     r text;
     m text;
     n int := 1;
   begin
     if v is null or position('@' in v) = 0 then return v; end if;
     pieces := regexp_split_to_array(v, $p$${EMAIL_PATTERN}$p$);
     r := pieces[1];
     for m in select (regexp_matches(v, $p$${EMAIL_PATTERN}$p$, 'g'))[1] loop
       n := n + 1;
       r := r || pg_temp.preview_address(m, generic) || pieces[n];
     end loop;
     return r;
   end $fn$`,
  `create function pg_temp.preview_text(v text) returns text language plpgsql stable as $fn$
   declare r text;
   begin
     if v is null or v = '' then return v; end if;
     select replacement into r from pg_temp.preview_people where original = lower(v);
     if found then return r; end if;
     return pg_temp.preview_addresses(v, true);
   end $fn$`,
  `create function pg_temp.preview_known(v text) returns text language sql stable as $fn$ select pg_temp.preview_addresses(v, false) $fn$`,
  ...(['preview_json', 'preview_known_json'] as const).map(
    (name) => `create function pg_temp.${name}(v jsonb) returns jsonb language plpgsql stable as $fn$
   declare r jsonb;
   begin
     case jsonb_typeof(v)
       when 'object' then
         select coalesce(jsonb_object_agg(pg_temp.preview_addresses(key, ${name === 'preview_json'}), pg_temp.${name}(value)), '{}'::jsonb) into r from jsonb_each(v);
         return r;
       when 'array' then
         select coalesce(jsonb_agg(pg_temp.${name}(value) order by n), '[]'::jsonb) into r from jsonb_array_elements(v) with ordinality as a(value, n);
         return r;
       when 'string' then return to_jsonb(pg_temp.${name === 'preview_json' ? 'preview_text' : 'preview_known'}(v #>> '{}'));
       else return v;
     end case;
   end $fn$`,
  ),
]

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`

/** One table's rewrite: only rows that change are written, so a second scrub writes nothing. */
function rewriteSql(table: string, columns: Record<string, string>): string[] {
  const names = Object.keys(columns).map(quoted)
  const values = Object.values(columns)
  const update = `update ${quoted(table)} set ${names.map((n, i) => `${n} = ${values[i]}`).join(', ')}
    where (${names.join(', ')}) is distinct from (${values.join(', ')})`
  if (table === 'feature_collaborators') {
    // Keyed by author: two authors that become one placeholder are merged (the latest event of both).
    return [`with old as (delete from feature_collaborators returning feature_name, created_by, created_by_user_id, latest_event_id)
      insert into feature_collaborators (feature_name, created_by, created_by_user_id, latest_event_id)
      select feature_name, ${person('created_by')}, created_by_user_id, max(latest_event_id) from old group by 1, 2, 3`]
  }
  if (table === 'users') {
    // E-mails and usernames are unique, and any user may hold another's placeholder (`user-1@preview.invalid` as their
    // address, `user-1` as their username, or two users each other's): every row that changes is first moved to a value
    // no row holds (random), then to its placeholder, so no rewrite meets a row that still holds its target.
    return [
      `update users set email = case when email is null then null else 'moving-' || gen_random_uuid() || '@preview.invalid' end,
        username = case when username is null then null else 'moving-' || gen_random_uuid() end
        where (email, username) is distinct from (${columns.email}, ${columns.username})`,
      update,
    ]
  }
  if (table === 'client_instances') {
    // Keyed by instance id: an SDK may have reported an id that is another's placeholder; the two become one instance.
    return [
      `with old as (delete from client_instances where instance_id is distinct from ${columns.instance_id} returning *)
        insert into client_instances (app_name, instance_id, environment, sdk_version, client_ip, created_at, last_seen)
        select app_name, ${columns.instance_id}, environment, max(sdk_version), null, min(created_at), max(last_seen) from old group by 1, 2, 3
        on conflict (app_name, instance_id, environment) do update
          set created_at = least(client_instances.created_at, excluded.created_at), last_seen = greatest(client_instances.last_seen, excluded.last_seen)`,
      update,
    ]
  }
  return [update]
}

/**
 * Users' e-mail addresses wherever else they are written (a flag's description, a constraint's values, a change request's
 * title…): each becomes its user's placeholder, in every text, JSON (each string and key) and text-array (each element)
 * column of the tables not emptied, the kept ones included. Only users' addresses: other addresses in kept tables are the
 * flags' configuration. A column that is a key (a tag's value, an application's name) may refuse the rewrite (another row
 * holds the placeholder, or rows point at the old value): then the rows that hold a user's address there are deleted, with
 * what hangs on them, rather than the scrub failing or the address staying.
 */
async function rewriteUsersAddresses(tx: Db, emptied: Set<string>): Promise<void> {
  const columns = await queryRows<{ table_name: string; column_name: string; type: string }>(
    tx,
    sql.raw(`select table_name, column_name, udt_name as type from information_schema.columns
      where table_schema = 'public' and udt_name in ('text', 'varchar', 'jsonb', '_text', '_varchar') order by table_name, ordinal_position`),
  )
  for (const { table_name: table, column_name: name, type } of columns) {
    if (emptied.has(table)) continue
    const column = quoted(name)
    const value =
      type === 'jsonb'
        ? `pg_temp.preview_known_json(${column})`
        : type.startsWith('_')
          ? `(select array_agg(pg_temp.preview_known(x) order by n) from unnest(${column}) with ordinality u(x, n))::${type === '_text' ? 'text' : 'varchar'}[]`
          : `pg_temp.preview_known(${column})::${type}`
    const changing = `position('@' in ${column}::text) > 0 and ${column} is distinct from ${value}`
    try {
      await tx.transaction((savepoint) => savepoint.execute(sql.raw(`update ${quoted(table)} set ${column} = ${value} where ${changing}`)))
    } catch (error) {
      const code = (error as { code?: string; cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code
      if (code !== '23505' && code !== '23503') throw error
      await tx.execute(sql.raw(`delete from ${quoted(table)} where ${changing}`))
    }
  }
}

/** Everything a preview must not inherit, removed or rewritten in one transaction. */
export async function scrubPreview(db: Db): Promise<void> {
  const plan = Object.entries(PREVIEW_SCRUB) as [string, TableScrub][]
  await db.transaction(async (tx) => {
    for (const statement of FUNCTIONS) await tx.execute(sql.raw(statement))
    for (const [table, what] of plan) if (what.action === 'empty') await tx.execute(sql.raw(`delete from ${quoted(table)}`))
    for (const [table, what] of plan) if (what.action === 'rewrite') for (const statement of rewriteSql(table, what.columns)) await tx.execute(sql.raw(statement))
    await rewriteUsersAddresses(tx, new Set(plan.filter(([, what]) => what.action === 'empty').map(([table]) => table)))
    // The functions are the transaction's: a second scrub on the same connection makes them again.
    for (const fn of ['preview_json(jsonb)', 'preview_known_json(jsonb)', 'preview_known(text)', 'preview_text(text)', 'preview_addresses(text, boolean)', 'preview_address(text, boolean)']) {
      await tx.execute(sql.raw(`drop function pg_temp.${fn}`))
    }
    // The event search's copies of the rewritten events, all of them (a preview's Worker has no cron to make them):
    // with writes to events held off, every id up to the newest is final.
    await tx.execute(sql`lock table ${events} in share mode`)
    await tx.execute(sql`insert into ${eventSearchText} (event_id, text) select e.id, ${searchTextOf('e')} from ${events} e`)
    await tx.execute(sql`update ${eventSearchState} set indexed_through = (select coalesce(max(id), 0) from ${events}), candidate_id = null, candidate_xmax = null`)
  })
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const url = process.env.DATABASE_URL
  if (!url) {
    console.error('DATABASE_URL is not set: give the connection string of the preview database to scrub')
    process.exit(1)
  }
  const previewToken = process.env.PREVIEW_ADMIN_TOKEN
  const database = openPg(url)
  try {
    await scrubPreview(database.db)
    if (previewToken) await bootstrapAdminTokens(database.db, new Date(), [previewToken])
    console.log('Preview database scrubbed: no production credential, integration, password or personal data is left in it.')
  } finally {
    await database.close()
  }
}
