import * as ipaddr from '../ip-address.js'

/**
 * Why a webhook URL must not be used, or undefined when it may: only http(s), and no IP literal in
 * loopback, private, link-local or other non-public ranges unless private targets are allowed.
 * (Host names are not resolved: Workers has no DNS API, so a name pointing inside is not caught here.)
 */
export function webhookUrlProblem(url: string, allowPrivate: boolean): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'url must be an absolute http or https URL'
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'url must use http or https'
  if (parsed.username || parsed.password) return 'url must not contain credentials: use the authorization parameter'
  if (allowPrivate) return undefined
  const host = parsed.hostname.replace(/^\[|\]$/g, '')
  if (host === 'localhost' || host.endsWith('.localhost')) return 'url points at this machine (localhost); set FLAGPOST_ALLOW_PRIVATE_WEBHOOKS=true to allow private targets'
  if (ipaddr.isValid(host)) {
    let address = ipaddr.parse(host)
    if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) address = (address as ipaddr.IPv6).toIPv4Address()
    const range = address.range()
    if (range !== 'unicast') return `url points at a ${range} address; set FLAGPOST_ALLOW_PRIVATE_WEBHOOKS=true to allow private targets`
  }
  return undefined
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const FORBIDDEN_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection'])

/** Parses the customHeaders parameter: a JSON object of valid header names to strings. */
export function parseCustomHeaders(text: string | undefined): { headers: Record<string, string>; problem?: string } {
  if (text === undefined || text.trim() === '') return { headers: {} }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { headers: {}, problem: 'customHeaders is not valid JSON' }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { headers: {}, problem: 'customHeaders must be a JSON object' }
  const headers: Record<string, string> = {}
  const bad: string[] = []
  for (const [name, v] of Object.entries(value)) {
    if (typeof v !== 'string' || !HEADER_NAME.test(name) || FORBIDDEN_HEADERS.has(name.toLowerCase()) || /[\r\n\0]/.test(v)) bad.push(name)
    else headers[name] = v
  }
  return bad.length > 0 ? { headers, problem: `customHeaders has invalid or forbidden headers: ${bad.join(', ')}` } : { headers }
}
