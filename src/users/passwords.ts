/*
 * Password hashes: PBKDF2-HMAC-SHA256 through WebCrypto, so the same code runs on Workers and Node.
 * Stored as `pbkdf2-sha256$<iterations>$<salt, base64>$<hash, base64>`; verification replays the
 * stored iteration count, so raising ITERATIONS later keeps old hashes working.
 *
 * 100,000 iterations is the most Cloudflare Workers' crypto.subtle accepts (it refuses more, to
 * bound the CPU one call can take); OWASP asks 600,000 for PBKDF2-SHA256, so this is the
 * strongest setting that runs in both homes. About 30-60 ms of CPU per hash.
 */

export const PASSWORD_ITERATIONS = 100_000
const MAX_ITERATIONS = 100_000
const SALT_BYTES = 16
const HASH_BITS = 256
const SCHEME = 'pbkdf2-sha256'

export const MIN_PASSWORD_LENGTH = 8
export const MAX_PASSWORD_LENGTH = 256

const encoder = new TextEncoder()

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes))
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0))

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(password), 'PBKDF2', false, ['deriveBits'])
  const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, key, HASH_BITS)
  return new Uint8Array(bits)
}

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES))
  const hash = await derive(password, salt, PASSWORD_ITERATIONS)
  return `${SCHEME}$${PASSWORD_ITERATIONS}$${toBase64(salt)}$${toBase64(hash)}`
}

/** Compares in time that depends only on the length, never on where the first difference is. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!
  return difference === 0
}

function parse(stored: string) {
  const [scheme, iterationsText, saltText, hashText] = stored.split('$')
  const iterations = Number(iterationsText)
  if (scheme !== SCHEME || !Number.isInteger(iterations) || iterations < 1 || iterations > MAX_ITERATIONS || !saltText || !hashText) return undefined
  try {
    return { iterations, salt: fromBase64(saltText), hash: fromBase64(hashText) }
  } catch {
    return undefined
  }
}

// Checked against when there is no real hash (unknown user, no password set), so that a failed
// sign-in costs the same PBKDF2 work whether or not the account exists.
const DUMMY = { iterations: PASSWORD_ITERATIONS, salt: new Uint8Array(SALT_BYTES), hash: new Uint8Array(HASH_BITS / 8) }

/** True when `password` matches `stored`; with no (or an unreadable) stored hash it does the same work and answers false. */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const parsed = (stored ? parse(stored) : undefined) ?? DUMMY
  const derived = await derive(password, parsed.salt, parsed.iterations)
  return timingSafeEqual(derived, parsed.hash) && parsed !== DUMMY
}
