/** An outgoing e-mail. */
export interface Email {
  to: string
  subject: string
  text: string
}

/**
 * Where e-mails go. Flagpost has no SMTP client: with no transport configured, no e-mail is sent and
 * responses say so (`emailSent: false`).
 */
export interface EmailTransport {
  /** Resolves once the transport accepted the mail; rejects when it did not. */
  send(email: Email): Promise<void>
}

/**
 * Hands each mail as JSON (`{ to, subject, text }`) to an HTTP endpoint (a mail relay or an e-mail API
 * behind a small adapter), with fetch, so it works on Workers and on Node. A 2xx answer means accepted.
 */
export function webhookEmailTransport(url: string, options: { authorization?: string } = {}): EmailTransport {
  const target = new URL(url)
  if (target.protocol !== 'https:' && target.protocol !== 'http:') throw new Error('The e-mail webhook URL must be an http(s) URL')
  return {
    async send(email) {
      const response = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(options.authorization ? { authorization: options.authorization } : {}) },
        body: JSON.stringify(email),
        signal: AbortSignal.timeout(10_000),
      })
      await response.body?.cancel()
      if (!response.ok) throw new Error(`The e-mail webhook answered ${response.status}`)
    },
  }
}

/** Sends, and answers whether the transport took the mail; never throws (a failed e-mail must not fail the request). */
export async function trySend(transport: EmailTransport | undefined, email: Email): Promise<boolean> {
  if (!transport) return false
  try {
    await transport.send(email)
    return true
  } catch (error) {
    console.warn(`e-mail to ${email.to} was not sent:`, error instanceof Error ? error.message : error)
    return false
  }
}
