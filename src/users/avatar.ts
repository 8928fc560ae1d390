const encoder = new TextEncoder()

/** A stable, gravatar-style picture URL from an e-mail address or name; computed, never fetched. */
export async function avatarUrl(emailOrName: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(emailOrName.trim().toLowerCase())))
  const hash = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')
  return `https://gravatar.com/avatar/${hash}?s=42&d=retro`
}

/** Memoizes avatarUrl for one response, where the same people appear on many flags. */
export function avatarCache() {
  const cache = new Map<string, Promise<string>>()
  return (seed: string) => {
    let url = cache.get(seed)
    if (!url) cache.set(seed, (url = avatarUrl(seed)))
    return url
  }
}
