const encoder = new TextEncoder()

const toHex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')

/** Tokens are looked up by this digest; the token itself is never stored. */
export async function hashSecret(secret: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(secret))))
}

export function randomHex(bytes: number): string {
  return toHex(crypto.getRandomValues(new Uint8Array(bytes)))
}

/** Unleash's token format: `<project | * | []>:<environment | *>.<random>`. */
export function newSecret(projects: string[], environment: string): string {
  const projectPart = projects.length === 1 ? projects[0] : '[]'
  return `${projectPart}:${environment}.${randomHex(32)}`
}

/** The shortest random part a given secret may have: a shorter one could be guessed. */
export const MIN_GIVEN_SECRET_RANDOM = 16

/**
 * Why a secret given for a new client or frontend token (POST /api/admin/api-tokens, INIT_CLIENT_API_TOKENS,
 * INIT_FRONTEND_API_TOKENS) must not be used, or undefined: the form Unleash gives its secrets,
 * `<project>:<environment>.<random>` with the token's own scope (`*` every project, `[]` several), and a random part
 * of at least 16 letters, digits, `-` or `_`, so that an SDK keeps its secret from Unleash and no one sets a guessable one.
 */
export function givenSecretProblem(secret: string, projects: string[], environment: string): string | undefined {
  const match = /^([^:]+):([^.]+)\.(.*)$/.exec(secret)
  if (!match) return 'secret must have the form <project>:<environment>.<random>'
  const projectPart = projects.length === 1 ? projects[0] : '[]'
  if (match[1] !== projectPart || match[2] !== environment) return `secret must begin with ${projectPart}:${environment}. (the token's projects and environment)`
  if (!new RegExp(`^[A-Za-z0-9_-]{${MIN_GIVEN_SECRET_RANDOM},200}$`).test(match[3]!)) return `the random part of secret must be ${MIN_GIVEN_SECRET_RANDOM} to 200 letters, digits, - or _`
  return undefined
}

/** What listings show in place of a secret: its scope and, for long random secrets, their first characters. */
export function displaySecret(secret: string): string {
  const dot = secret.indexOf('.')
  const [scope, random] = dot === -1 ? ['', secret] : [secret.slice(0, dot + 1), secret.slice(dot + 1)]
  return `${scope}${random.length >= 32 ? random.slice(0, 6) : ''}…`
}
