import type { ReactNode } from 'react'
import { Table, Text, VisuallyHidden } from '@mantine/core'
import type { Schemas } from '../api/client'

export type ApiToken = Schemas['apiTokenSchema']

/** An expiry as the table shows it: the date, or that it has passed. */
export const expiry = (expiresAt: string) => (new Date(expiresAt) <= new Date() ? `expired ${new Date(expiresAt).toLocaleDateString()}` : new Date(expiresAt).toLocaleString())

/** API tokens by their masked secrets (the server never answers a secret again), with what may be done to each. */
export function TokenTable({ tokens, actions }: { tokens: ApiToken[]; actions: (token: ApiToken) => ReactNode }) {
  return (
    <Table striped>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Name</Table.Th>
          <Table.Th>Type</Table.Th>
          <Table.Th>Environment</Table.Th>
          <Table.Th>Projects</Table.Th>
          <Table.Th>Secret</Table.Th>
          <Table.Th>Expires</Table.Th>
          <Table.Th>Last seen</Table.Th>
          <Table.Th>
            <VisuallyHidden>Actions</VisuallyHidden>
          </Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {tokens.map((t) => (
          <Table.Tr key={t.secret}>
            <Table.Td>{t.tokenName}</Table.Td>
            <Table.Td>{t.type}</Table.Td>
            <Table.Td>{t.environment}</Table.Td>
            <Table.Td>{t.projects.join(', ')}</Table.Td>
            <Table.Td>
              <Text size="sm" ff="monospace">
                {t.secret}
              </Text>
            </Table.Td>
            <Table.Td>{t.expiresAt ? expiry(t.expiresAt) : 'never'}</Table.Td>
            <Table.Td>{t.seenAt ? new Date(t.seenAt).toLocaleString() : 'never'}</Table.Td>
            <Table.Td>{actions(t)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  )
}
