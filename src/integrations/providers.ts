/** The integration providers Flagpost can deliver events to. The list is data: a provider is its parameters plus a sender in delivery.ts. */
export interface ProviderParameter {
  name: string
  displayName: string
  type: 'url' | 'text' | 'textfield'
  description: string
  placeholder?: string
  required: boolean
  sensitive: boolean
}

export interface Provider {
  name: string
  displayName: string
  description: string
  documentationUrl: string
  parameters: ProviderParameter[]
  events: string[]
}

export const providers: Provider[] = [
  {
    name: 'webhook',
    displayName: 'Webhook',
    description: 'Sends each matching event as an HTTP POST to a URL of yours.',
    documentationUrl: 'https://docs.getunleash.io/reference/integrations/webhook',
    parameters: [
      // The URL is a secret as a whole: capability URLs (Slack, Teams, Discord) are their own credential, and any
      // URL may carry a token in its path or query. As in Unleash, it is stored and never shown again.
      { name: 'url', displayName: 'Webhook URL', type: 'url', description: 'http or https URL the events are POSTed to; stored, and shown masked', required: true, sensitive: true },
      { name: 'contentType', displayName: 'Content-Type', type: 'text', description: 'Content-Type of the request; default application/json', placeholder: 'application/json', required: false, sensitive: false },
      { name: 'authorization', displayName: 'Authorization', type: 'text', description: 'Sent as the Authorization header; stored, and shown masked', required: false, sensitive: true },
      {
        name: 'bodyTemplate',
        displayName: 'Body template',
        type: 'textfield',
        description: 'A Mustache template over { event }, e.g. {"text": "{{event.createdBy}} changed {{event.featureName}}"}; values are escaped for JSON when the content type is JSON. Default: the whole event as JSON',
        required: false,
        sensitive: false,
      },
      { name: 'customHeaders', displayName: 'Extra HTTP headers', type: 'textfield', description: 'A JSON object of header names to string values', placeholder: '{ "X-Team": "payments" }', required: false, sensitive: true },
    ],
    events: [],
  },
]

export const providerNamed = (name: string) => providers.find((p) => p.name === name)

/** What a sensitive parameter shows instead of its value; sending it back on an update keeps the stored value. */
export const MASK = '*****'

/**
 * The one place sensitive integration parameters are masked, for every output: API responses, the
 * `addon-config-*` events (stored masked), delivery logs. `values` is keyed by parameter names (the
 * parameters, or a delivery's details); an unknown provider's values are all masked.
 */
export function maskSensitive<V>(providerName: string, values: Record<string, V>): Record<string, V | typeof MASK> {
  const provider = providerNamed(providerName)
  const sensitive = (name: string) => provider?.parameters.find((p) => p.name === name)?.sensitive ?? provider === undefined
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, sensitive(name) && value !== '' && value !== null && value !== undefined ? MASK : value]))
}
