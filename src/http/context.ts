import type { Context } from 'hono'
import type { Db } from '../db.js'
import type { Principal } from './auth.js'
import type { DeliveryOptions } from '../integrations/delivery.js'

export type Clock = () => Date

export interface AppVariables {
  db: Db
  clock: Clock
  principal: Principal
  delivery: DeliveryOptions
}

export interface AppEnv {
  // Bindings are whatever the entry passes to app.fetch (Workers env, or nothing on Node).
  Bindings: Record<string, unknown>
  Variables: AppVariables
}

export type AppContext = Context<AppEnv>
