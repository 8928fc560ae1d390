const encoder = new TextEncoder()

interface NodeCrypto {
  createHash(algorithm: 'sha256'): { update(text: string, encoding: 'utf8'): { digest(encoding: 'hex'): string } }
}

// On Node (the server, the tests) node:crypto hashes an answer synchronously: WebCrypto's digest there is a job on
// another thread and a promise, about a tenth of a frontend API request's CPU. Workers have WebCrypto only (the
// worker runs without Node compatibility); found at run time, so the worker bundle imports nothing of Node.
const nodeCrypto = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined

export async function sha256Hex(text: string): Promise<string> {
  if (nodeCrypto) return nodeCrypto.createHash('sha256').update(text, 'utf8').digest('hex')
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)))
  let hex = ''
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0')
  return hex
}
