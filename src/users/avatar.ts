const encoder = new TextEncoder()

/** A stable, gravatar-style picture URL from an e-mail address or name; computed, never fetched. */
export async function avatarUrl(emailOrName: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(emailOrName.trim().toLowerCase())))
  const hash = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')
  return `https://gravatar.com/avatar/${hash}?s=42&d=retro`
}

// Shared by all requests: the URL is a pure function of its seed, and the same people appear on many
// flags of every response (hashing them again each time was a measurable share of a flag read).
const memo = new Map<string, Promise<string>>()
const MEMO_LIMIT = 10_000

/** Memoized avatarUrl, where the same people appear on many flags. */
export function avatarCache() {
  return (seed: string) => {
    let url = memo.get(seed)
    if (!url) {
      if (memo.size >= MEMO_LIMIT) memo.clear()
      memo.set(seed, (url = avatarUrl(seed)))
    }
    return url
  }
}
