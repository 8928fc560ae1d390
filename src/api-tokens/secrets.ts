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

/** What listings show in place of a secret: its scope and, for long random secrets, their first characters. */
export function displaySecret(secret: string): string {
  const dot = secret.indexOf('.')
  const [scope, random] = dot === -1 ? ['', secret] : [secret.slice(0, dot + 1), secret.slice(dot + 1)]
  return `${scope}${random.length >= 32 ? random.slice(0, 6) : ''}…`
}
