import { useEffect, useState } from 'react'
import { Button, Card, NumberInput, Stack, Switch, Table, Text, Title, VisuallyHidden } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ok } from '../api/client'
import { changeRequestConfigKey } from '../api/change-requests'
import { ErrorMessage } from './error-message'

interface Setting {
  environment: string
  changeRequestsEnabled: boolean
  requiredApprovals: number
}

/**
 * A project's change request settings per environment (`GET/PUT …/change-requests/config`): on or off, and the approvals
 * needed (1–10). For those with UPDATE_PROJECT; the server also asks SKIP_CHANGE_REQUEST to turn them off or lower the
 * approvals, and its refusal is shown.
 */
export function ChangeRequestSettings({ projectId }: { projectId: string }) {
  const config = useQuery({
    queryKey: changeRequestConfigKey(projectId),
    queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/change-requests/config', { params: { path: { projectId } } })),
  })
  return (
    <Card withBorder component="section" aria-labelledby="change-request-settings">
      <Title order={2} size="h4" id="change-request-settings">
        Change request settings
      </Title>
      <Text size="sm" c="dimmed">
        Where change requests are on, a change to what the environment&apos;s SDKs receive waits for the approvals set here.
      </Text>
      {config.isError ? (
        <ErrorMessage error={config.error} />
      ) : (
        <Table mt="xs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Environment</Table.Th>
              <Table.Th>Change requests</Table.Th>
              <Table.Th>Required approvals</Table.Th>
              <Table.Th>
                <VisuallyHidden>Save</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(config.data ?? []).map((setting) => (
              <SettingRow key={setting.environment} projectId={projectId} setting={setting} />
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Card>
  )
}

function SettingRow({ projectId, setting }: { projectId: string; setting: Setting }) {
  const queryClient = useQueryClient()
  const [enabled, setEnabled] = useState(setting.changeRequestsEnabled)
  const [approvals, setApprovals] = useState<number>(setting.requiredApprovals)
  useEffect(() => {
    setEnabled(setting.changeRequestsEnabled)
    setApprovals(setting.requiredApprovals)
  }, [setting.changeRequestsEnabled, setting.requiredApprovals])
  const save = useMutation({
    mutationFn: () =>
      ok(
        api.PUT('/api/admin/projects/{projectId}/change-requests/config', {
          params: { path: { projectId } },
          body: { environment: setting.environment, changeRequestsEnabled: enabled, requiredApprovals: approvals },
        }),
      ),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: changeRequestConfigKey(projectId) })
      notifications.show({ message: `Change request settings of ${setting.environment} saved`, color: 'green' })
    },
  })
  const changed = enabled !== setting.changeRequestsEnabled || approvals !== setting.requiredApprovals
  const valid = Number.isInteger(approvals) && approvals >= 1 && approvals <= 10
  return (
    <>
      <Table.Tr>
        <Table.Td>{setting.environment}</Table.Td>
        <Table.Td>
          <Switch checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} aria-label={`Change requests in ${setting.environment}`} />
        </Table.Td>
        <Table.Td>
          <NumberInput
            aria-label={`Required approvals in ${setting.environment}`}
            min={1}
            max={10}
            clampBehavior="strict"
            allowDecimal={false}
            value={approvals}
            onChange={(v) => setApprovals(typeof v === 'number' ? v : Number(v))}
            w={90}
            disabled={!enabled}
          />
        </Table.Td>
        <Table.Td>
          <Button size="xs" disabled={!changed || !valid} loading={save.isPending} onClick={() => save.mutate()} aria-label={`Save the change request settings of ${setting.environment}`}>
            Save
          </Button>
        </Table.Td>
      </Table.Tr>
      {save.isError && (
        <Table.Tr>
          <Table.Td colSpan={4}>
            <Stack gap={0}>
              <ErrorMessage error={save.error} />
            </Stack>
          </Table.Td>
        </Table.Tr>
      )}
    </>
  )
}
