import type { Context } from 'hono'
import type { Db } from '../db.js'
import type { Principal } from './auth.js'
import type { DeliveryOptions } from '../integrations/delivery.js'
import type { SdkState } from '../client-api/state.js'
import type { EmailTransport } from '../users/email.js'
import type { OverviewCache } from '../projects/overview.js'
import type { FlagStates } from '../flags/states.js'

export type Clock = () => Date

export interface AppVariables {
  db: Db
  clock: Clock
  principal: Principal
  delivery: DeliveryOptions
  accounts: AccountSettings
  /** Caches and background work of the SDK-facing routes (client API, frontend API, metrics). */
  sdk: SdkState
  /** Serialized project overviews (operation 2) by revision. */
  overviews: OverviewCache
  /** What optimistic writes know of the flags (src/flags/states.ts). */
  flagStates: FlagStates
  /** Set once the request has checked the change-request rule (src/change-requests/guard.ts). */
  changeRequestRuleConsulted?: boolean
}

/** What user accounts need from the deployment: where links point, and how e-mail leaves (none: no e-mail is sent). */
export interface AccountSettings {
  publicUrl?: string
  email?: EmailTransport
}

export interface AppEnv {
  // Bindings are whatever the entry passes to app.fetch (Workers env, or nothing on Node).
  Bindings: Record<string, unknown>
  Variables: AppVariables
}

export type AppContext = Context<AppEnv>

/** The origin links in e-mails and responses point to: the configured public URL, else the request's origin. */
export const publicBaseUrl = (c: Context<AppEnv>) => (c.var.accounts.publicUrl ?? new URL(c.req.url).origin).replace(/\/+$/, '')
