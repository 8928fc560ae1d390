import type { Context } from 'hono'
import type { EmailTransport } from './email.js'
import type { RunInBackground } from '../http/background.js'

/** What user accounts need from the deployment: where links point, and how e-mail leaves (none: no e-mail is sent). */
export interface AccountSettings {
  publicUrl?: string
  email?: EmailTransport
  /** FLAGPOST_ALLOW_PASSWORD_LOGIN: password sign-in works even where the settings switch it off (the way back in). */
  passwordAlwaysAllowed?: boolean
  /** Runs work after the response (a reset e-mail: the answer must not wait on whether there is an account). */
  background?: RunInBackground
  /** The deployment's version, as the UI configuration tells it. */
  version?: string
}

declare module 'hono' {
  interface ContextVariableMap {
    accounts: AccountSettings
  }
}

/** The origin links in e-mails and responses point to: the configured public URL, else the request's origin. */
export const publicBaseUrl = (c: Context) => (c.var.accounts.publicUrl ?? new URL(c.req.url).origin).replace(/\/+$/, '')
