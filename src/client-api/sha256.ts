const encoder = new TextEncoder()

/** A synchronous SHA-256 in hex that a home may give (the Node server gives node:crypto's, see server.ts). */
export type Sha256Hex = (text: string) => string

let given: Sha256Hex | undefined

/**
 * Makes sha256Hex use `hash`. On Node, WebCrypto's digest is a job on another thread and a promise: about a tenth of a
 * frontend API request's CPU, where node:crypto's hash of the same bytes is a few microseconds. Workers keep WebCrypto.
 */
export function useSha256Hex(hash: Sha256Hex): void {
  given = hash
}

/** SHA-256 of the text's UTF-8 bytes, in hex. */
export async function sha256Hex(text: string): Promise<string> {
  if (given) return given(text)
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)))
  let hex = ''
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0')
  return hex
}
