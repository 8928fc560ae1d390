import { Badge, Tooltip } from '@mantine/core'

/**
 * An environment protected by change requests (the project's change-request settings), shown to everyone: for a
 * caller who must use them, "changes need a change request"; for one who may skip them, that they may.
 */
export function ProtectedBadge({ environment, mustRequest }: { environment: string; mustRequest: boolean }) {
  const text = mustRequest ? 'Protected: changes need a change request' : 'Protected: change requests (you may skip them)'
  return (
    <Tooltip label={`Changes to ${environment} go through change requests with approvals`}>
      <Badge variant="light" color="blue" tt="none" leftSection={<span aria-hidden>🔒</span>} data-protected-environment={environment}>
        {text}
      </Badge>
    </Tooltip>
  )
}
