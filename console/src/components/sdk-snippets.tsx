import { Button, Code, CopyButton, Stack, Tabs, Text } from '@mantine/core'

interface Snippet {
  id: string
  label: string
  code: string
}

const quoted = (text: string) => JSON.stringify(text)

/** How an SDK connects with a new token: this console's address and the token filled in. None for an admin token. */
export function snippetsFor(type: string, secret: string, origin: string): Snippet[] {
  if (type === 'client' || type === 'backend') {
    return [
      {
        id: 'node',
        label: 'Node.js (unleash-client)',
        code: `import { initialize } from 'unleash-client'

const unleash = initialize({
  url: ${quoted(`${origin}/api/`)},
  appName: 'my-app',
  customHeaders: { Authorization: ${quoted(secret)} },
})

unleash.on('synchronized', () => {
  console.log(unleash.isEnabled('my-flag'))
})`,
      },
      {
        id: 'openfeature',
        label: 'OpenFeature (OFREP)',
        code: `import { OpenFeature } from '@openfeature/server-sdk'
import { OFREPProvider } from '@openfeature/ofrep-provider'

await OpenFeature.setProviderAndWait(
  new OFREPProvider({ baseUrl: ${quoted(origin)}, headers: [['Authorization', ${quoted(secret)}]] }),
)
const enabled = await OpenFeature.getClient().getBooleanValue('my-flag', false, { targetingKey: 'user-1' })`,
      },
    ]
  }
  if (type === 'frontend') {
    return [
      {
        id: 'browser',
        label: 'Browser (unleash-proxy-client)',
        code: `import { UnleashClient } from 'unleash-proxy-client'

const unleash = new UnleashClient({
  url: ${quoted(`${origin}/api/frontend`)},
  clientKey: ${quoted(secret)},
  appName: 'my-app',
})
unleash.on('ready', () => console.log(unleash.isEnabled('my-flag')))
unleash.start()`,
      },
      {
        id: 'react',
        label: 'React (@unleash/proxy-client-react)',
        code: `import { FlagProvider, useFlag } from '@unleash/proxy-client-react'

const config = {
  url: ${quoted(`${origin}/api/frontend`)},
  clientKey: ${quoted(secret)},
  appName: 'my-app',
}

// <FlagProvider config={config}><App /></FlagProvider>, then in a component:
// const enabled = useFlag('my-flag')`,
      },
      {
        id: 'openfeature',
        label: 'OpenFeature (OFREP, web)',
        code: `import { OpenFeature } from '@openfeature/web-sdk'
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider'

await OpenFeature.setProviderAndWait(
  new OFREPWebProvider({ baseUrl: ${quoted(origin)}, headers: [['Authorization', ${quoted(secret)}]] }),
)
const enabled = OpenFeature.getClient().getBooleanValue('my-flag', false)`,
      },
    ]
  }
  return []
}

/** The snippets of a new SDK token, one tab each, each copyable. */
export function SdkSnippets({ type, secret }: { type: string; secret: string }) {
  const snippets = snippetsFor(type, secret, window.location.origin)
  if (snippets.length === 0) return null
  return (
    <Stack gap="xs">
      <Text fw={600}>Connect an SDK</Text>
      <Tabs defaultValue={snippets[0]!.id}>
        <Tabs.List>
          {snippets.map((s) => (
            <Tabs.Tab key={s.id} value={s.id}>
              {s.label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        {snippets.map((s) => (
          <Tabs.Panel key={s.id} value={s.id} pt="xs">
            <Stack gap="xs">
              <Code block tabIndex={0} aria-label={`${s.label} snippet`} style={{ whiteSpace: 'pre', overflowX: 'auto' }}>
                {s.code}
              </Code>
              <CopyButton value={s.code}>
                {({ copied, copy }) => (
                  <Button size="xs" variant="default" onClick={copy} style={{ alignSelf: 'flex-start' }}>
                    {copied ? 'Copied' : `Copy the ${s.label} snippet`}
                  </Button>
                )}
              </CopyButton>
            </Stack>
          </Tabs.Panel>
        ))}
      </Tabs>
    </Stack>
  )
}
