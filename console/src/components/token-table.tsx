import type { ReactNode } from 'react'
import { Text } from '@mantine/core'
import type { Schemas } from '../api/client'
import { RowTable } from './list-page'

export type ApiToken = Schemas['apiTokenSchema']

/** An expiry as the table shows it: the date, or that it has passed. */
export const expiry = (expiresAt: string) => (new Date(expiresAt) <= new Date() ? `expired ${new Date(expiresAt).toLocaleDateString()}` : new Date(expiresAt).toLocaleString())

/** API tokens by their masked secrets (the server never answers a secret again), with what may be done to each. */
export function TokenTable({ tokens, actions, empty }: { tokens: ApiToken[]; actions: (token: ApiToken) => ReactNode; empty: string }) {
  return (
    <RowTable
      rows={tokens}
      rowKey={(t) => t.secret}
      empty={empty}
      columns={[
        { header: 'Name', cell: (t) => t.tokenName },
        { header: 'Type', cell: (t) => t.type },
        { header: 'Environment', cell: (t) => t.environment },
        { header: 'Projects', cell: (t) => t.projects.join(', ') },
        {
          header: 'Secret',
          cell: (t) => (
            <Text size="sm" ff="monospace">
              {t.secret}
            </Text>
          ),
        },
        { header: 'Expires', cell: (t) => (t.expiresAt ? expiry(t.expiresAt) : 'never') },
        { header: 'Last seen', cell: (t) => (t.seenAt ? new Date(t.seenAt).toLocaleString() : 'never') },
      ]}
      actions={actions}
    />
  )
}
