import { inArray, sql } from 'drizzle-orm'
import { renderMustache } from './mustache.js'
import { addons, events, integrationEvents, integrationOutbox } from '../../schema/index.js'
import { batch, queryRows, together, type Db } from '../db.js'
import { eventView, type EventView } from '../events/search.js'
import { parseCustomHeaders, webhookUrlProblem } from './webhook-target.js'
import type { ClaimLedger, HeldClaim } from '../http/background.js'
import type { Logger } from '../http/request-log.js'

/** One webhook request as the transport makes it. */
export interface WebhookRequest {
  url: string
  headers: Headers
  body: string
  timeoutMs: number
  allowPrivateTargets: boolean
}

/**
 * Sends a webhook request and answers its status; throws DeliveryRefused for a target it will not reach.
 * Redirects are never followed (a redirect could lead anywhere the target check did not look).
 */
export type WebhookSend = (request: WebhookRequest) => Promise<number>

/** A failure whose message is safe to show in the delivery log (it names no address, port or system error). */
export class DeliveryRefused extends Error {}

/**
 * Web-standard fetch, for Workers: a Worker's fetch reaches only the public internet (never the account's
 * private network or the machine it runs on), and IP literals in private ranges are refused before it.
 */
export const fetchWebhook: WebhookSend = async ({ url, headers, body, timeoutMs }) => {
  const response = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) })
  await response.body?.cancel()
  return response.status
}

export interface DeliveryOptions {
  /** Let webhooks reach loopback/private addresses (FLAGPOST_ALLOW_PRIVATE_WEBHOOKS). */
  allowPrivateTargets: boolean
  /** How long one delivery may take. */
  timeoutMs: number
  /** How requests leave: fetch on Workers; on Node, a transport that resolves the host and pins the checked address (src/webhook-node.ts). */
  send: WebhookSend
  /** How outbound GETs leave (the migration from Unleash): fetch on Workers; on Node, the address-pinning transport. Throws DeliveryRefused for a target it will not reach. */
  get: OutboundGet
  /** Where each delivery is logged (its id, integration, event and outcome); none: not logged. */
  logger?: Logger
}

/** A GET of a user-given URL: the target checked as a webhook's (webhookUrlProblem; on Node every resolved address too), redirects not followed. */
export type OutboundGet = (url: string, init: { headers: Record<string, string>; timeoutMs: number; allowPrivateTargets: boolean }) => Promise<Response>

export const fetchGet: OutboundGet = (url, { headers, timeoutMs }) => fetch(url, { method: 'GET', headers, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) })

export const DEFAULT_DELIVERY_OPTIONS: DeliveryOptions = { allowPrivateTargets: false, timeoutMs: 10_000, send: fetchWebhook, get: fetchGet }

const BATCH = 20
const MAX_BATCHES = 50
// A claim this old belongs to a delivery that died (process stopped, isolate evicted): take it over.
const STALE_CLAIM_MS = 5 * 60_000
export const KEPT_PER_INTEGRATION = 100

interface Outcome {
  state: 'success' | 'failed' | 'successWithErrors'
  stateDetails: string
  details: Record<string, unknown>
}

/** Renders a Mustache body template over { event }; values are escaped for a JSON string when the body is JSON. */
export function renderBody(template: string, event: EventView, contentType: string): string {
  const json = /json/i.test(contentType)
  const escape = (value: unknown) => (typeof value === 'string' ? (json ? JSON.stringify(value).slice(1, -1) : value) : JSON.stringify(value))
  return renderMustache(template, { event }, escape)
}

async function sendWebhook(parameters: Record<string, string>, event: EventView, options: DeliveryOptions): Promise<Outcome> {
  const url = parameters.url ?? ''
  const contentType = parameters.contentType || 'application/json'
  let body: string
  try {
    body = parameters.bodyTemplate ? renderBody(parameters.bodyTemplate, event, contentType) : JSON.stringify(event)
  } catch (error) {
    return { state: 'failed', stateDetails: `The body template could not be rendered: ${(error as Error).message}`, details: { url, contentType } }
  }
  const details = { url, contentType, body }
  const target = webhookUrlProblem(url, options.allowPrivateTargets)
  if (target) return { state: 'failed', stateDetails: `Not delivered: ${target}`, details }
  const custom = parseCustomHeaders(parameters.customHeaders)
  const headers = new Headers({ 'content-type': contentType, 'user-agent': 'flagpost-webhook' })
  for (const [name, value] of Object.entries(custom.headers)) headers.set(name, value)
  if (parameters.authorization) headers.set('authorization', parameters.authorization)
  try {
    const status = await options.send({ url, headers, body, timeoutMs: options.timeoutMs, allowPrivateTargets: options.allowPrivateTargets })
    if (status < 200 || status >= 300) return { state: 'failed', stateDetails: `Webhook request failed with status code: ${status}`, details }
    if (custom.problem) return { state: 'successWithErrors', stateDetails: `Webhook request was successful with status code: ${status}, but ${custom.problem}: they were not sent`, details }
    return { state: 'success', stateDetails: `Webhook request was successful with status code: ${status}`, details }
  } catch (error) {
    // The log says what kind of failure it was, never the system's words: those name addresses and ports,
    // which would turn webhooks into a scanner of the network Flagpost runs in.
    const e = error as Error
    const reason =
      e instanceof DeliveryRefused ? `refused: ${e.message}` : e.name === 'TimeoutError' || e.name === 'AbortError' ? `timed out after ${options.timeoutMs} ms` : 'failed: the connection could not be made or was broken'
    return { state: 'failed', stateDetails: `Webhook request ${reason}`, details }
  }
}

/** Takes up to BATCH queued deliveries that nobody else is making (SKIP LOCKED), marking them as under way. */
async function claim(db: Db, now: Date) {
  const claimed = await queryRows<{ id: string | number; integration_id: number; event_id: string | number }>(db, sql`
    update ${integrationOutbox} set claimed_at = ${now}
    where id in (
      select id from ${integrationOutbox}
      where claimed_at is null or claimed_at < ${new Date(now.getTime() - STALE_CLAIM_MS)}
      order by id limit ${BATCH}
      for update skip locked
    )
    returning id, integration_id, event_id`)
  return claimed.map((r) => ({
    id: Number(r.id),
    integrationId: Number(r.integration_id),
    eventId: Number(r.event_id),
  }))
}

/**
 * Makes every queued delivery: outside any transaction (no network call holds a lock), then records
 * each attempt as an integration event and drops the delivery from the queue, keeping the newest
 * KEPT_PER_INTEGRATION integration events per integration. Returns how many deliveries it made.
 */
export async function deliverPending(db: Db, clock: () => Date, options: DeliveryOptions, claims?: ClaimLedger): Promise<number> {
  let made = 0
  for (let round = 0; round < MAX_BATCHES && (claims?.open() ?? true); round++) {
    const claimedAt = clock()
    const jobs = await claim(db, claimedAt)
    if (jobs.length === 0) break
    for (const job of jobs) claims?.hold('integration_deliveries', job.id, claimedAt)
    const [integrationRows, eventRows] = await together(db, [
      (q) => q.select().from(addons).where(inArray(addons.id, [...new Set(jobs.map((j) => j.integrationId))])),
      (q) => q.select().from(events).where(inArray(events.id, [...new Set(jobs.map((j) => j.eventId))])),
    ])
    const outcomes = await Promise.all(
      jobs.map(async (job) => {
        const integration = integrationRows.find((a) => a.id === job.integrationId)
        const row = eventRows.find((e) => e.id === job.eventId)
        // Switched off (or gone) since the event was queued: nothing to deliver.
        if (!integration || !integration.enabled || !row) return { job, outcome: undefined, event: undefined }
        const event = eventView(row)
        return { job, event, outcome: await sendWebhook(integration.parameters as Record<string, string>, event, options) }
      }),
    )
    const at = clock()
    const recorded = outcomes.filter((o) => o.outcome)
    for (const { job, outcome } of recorded) {
      options.logger?.log('info', 'webhook delivery', { job: 'integration_deliveries', deliveryId: job.id, integrationId: job.integrationId, eventId: job.eventId, state: outcome!.state, stateDetails: outcome!.stateDetails })
    }
    // A fixed list of statements: one batch (one round trip over Neon's HTTP).
    await batch(db, [
      ...(recorded.length > 0
        ? [
            (q: Db) =>
              q.insert(integrationEvents).values(
                recorded.map(({ job, event, outcome }) => ({ integrationId: job.integrationId, createdAt: at, event, state: outcome!.state, stateDetails: outcome!.stateDetails, details: outcome!.details })),
              ),
          ]
        : []),
      (q: Db) => q.delete(integrationOutbox).where(inArray(integrationOutbox.id, jobs.map((j) => j.id))),
      ...[...new Set(recorded.map((o) => o.job.integrationId))].map(
        (integrationId) => (q: Db) =>
          q.execute(sql`
            delete from ${integrationEvents}
            where integration_id = ${integrationId}
              and id <= (select id from ${integrationEvents} where integration_id = ${integrationId} order by id desc offset ${KEPT_PER_INTEGRATION} limit 1)`),
      ),
    ])
    for (const job of jobs) claims?.drop('integration_deliveries', job.id)
    made += jobs.length
    // Fewer than a batch: the queue was empty as claimed (what other writes queue since, they claim).
    if (jobs.length < BATCH) break
  }
  return made
}

/**
 * Hands back the deliveries of `held` this process claimed and did not make (shutdown): the next sweep of any process
 * makes them, rather than once their claim is stale. Only while the claim is still this one (claimed_at unchanged).
 */
export async function releaseDeliveryClaims(db: Db, held: HeldClaim[]): Promise<number> {
  const mine = held.filter((h) => h.queue === 'integration_deliveries').map((h) => ({ id: h.id, at: h.at.toISOString() }))
  if (mine.length === 0) return 0
  const rows = await queryRows<{ id: number }>(
    db,
    sql`update ${integrationOutbox} o set claimed_at = null
      from jsonb_to_recordset(${JSON.stringify(mine)}::jsonb) as h(id bigint, at timestamptz)
      where o.id = h.id and o.claimed_at = h.at
      returning o.id`,
  )
  return rows.length
}

declare module 'hono' {
  interface ContextVariableMap {
    /** How this deployment delivers integration events (targets allowed, timeout, transport). */
    delivery: DeliveryOptions
  }
}
