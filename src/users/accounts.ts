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

/**
 * The origin links in responses point to: the configured public URL, else the request's origin (shown only to the caller
 * whose own request named it). Never for a link sent to someone else: see `emailTransport`.
 */
export const publicBaseUrl = (c: Context) => (c.var.accounts.publicUrl ?? new URL(c.req.url).origin).replace(/\/+$/, '')

/**
 * The transport for e-mails that carry a link, only when FLAGPOST_PUBLIC_URL is set: a link e-mailed to someone else is never
 * built from the request's Host header (a forged Host would send the recipient's reset token to another host).
 */
export const emailTransport = (c: Context) => (c.var.accounts.publicUrl ? c.var.accounts.email : undefined)
