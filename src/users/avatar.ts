import { memoize } from '../memoize.js'

const encoder = new TextEncoder()

/**
 * A stable, gravatar-style picture URL from an e-mail address or name; computed, never fetched. Kept for all
 * requests: the same people appear on many flags of every response (hashing them again each time was a
 * measurable share of a flag read).
 */
export const avatarUrl = memoize(async (emailOrName: string): Promise<string> => {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(emailOrName.trim().toLowerCase())))
  const hash = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')
  return `https://gravatar.com/avatar/${hash}?s=42&d=retro`
}, 10_000)
