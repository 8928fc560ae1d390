import { useState } from 'react'
import { Button, Group, Select, Stack, Table, Text, Title, VisuallyHidden } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ok } from '../api/client'
import { useAllows, userName as nameOf } from '../api/session'
import { ErrorMessage } from './error-message'
import { Loading } from './loading'

/** The members of a project and their project roles: add, change, remove (for those who may update the project). */
export function ProjectAccess({ projectId }: { projectId: string }) {
  const allows = useAllows()
  const queryClient = useQueryClient()
  const key = ['project-access', projectId]
  const access = useQuery({ queryKey: key, queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/access', { params: { path: { projectId } } })) })
  // Only admins may list users (GET /api/admin/user-admin); others manage the members already there.
  const users = useQuery({ queryKey: ['users'], queryFn: () => ok(api.GET('/api/admin/user-admin')), enabled: allows('ADMIN') })
  const [newUser, setNewUser] = useState<string | null>(null)
  const [newRole, setNewRole] = useState<string | null>(null)
  const done = (message: string) => async () => {
    await queryClient.invalidateQueries({ queryKey: key })
    notifications.show({ message, color: 'green' })
  }
  const add = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/projects/{projectId}/access', { params: { path: { projectId } }, body: { users: [Number(newUser)], roles: [Number(newRole)] } })),
    onSuccess: async () => {
      setNewUser(null)
      await done('Member added')()
    },
  })
  const change = useMutation({
    mutationFn: ({ userId, role }: { userId: number; role: number }) =>
      ok(api.PUT('/api/admin/projects/{projectId}/users/{userId}/roles', { params: { path: { projectId, userId: String(userId) } }, body: { roles: [role] } })),
    onSuccess: done('Role changed'),
  })
  const remove = useMutation({
    mutationFn: (userId: number) => ok(api.DELETE('/api/admin/projects/{projectId}/users/{userId}/roles', { params: { path: { projectId, userId: String(userId) } } })),
    onSuccess: done('Member removed'),
  })
  if (access.isPending) return <Loading />
  if (access.isError) return <ErrorMessage error={access.error} />
  const roles = access.data.roles.map((r) => ({ value: String(r.id), label: r.name }))
  const error = add.error ?? change.error ?? remove.error
  const members = new Set(access.data.users.map((u) => u.id))
  const candidates = (users.data?.users ?? []).filter((u) => !members.has(u.id)).map((u) => ({ value: String(u.id), label: nameOf(u) }))
  return (
    <Stack gap="xs" component="section" aria-labelledby="project-access-title">
      <Title order={2} size="h3" id="project-access-title">
        Members and roles
      </Title>
      {error && <ErrorMessage error={error} />}
      {access.data.users.length === 0 ? (
        <Text c="dimmed" size="sm">
          No one has a role in this project yet.
        </Text>
      ) : (
        <Table striped aria-labelledby="project-access-title">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>User</Table.Th>
              <Table.Th>Role</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {access.data.users.map((u) => (
              <Table.Tr key={u.id}>
                <Table.Td>{nameOf(u)}</Table.Td>
                <Table.Td>
                  <Select
                    aria-label={`Role of ${nameOf(u)}`}
                    data={roles}
                    value={u.roles[0] !== undefined ? String(u.roles[0]) : null}
                    onChange={(v) => v && change.mutate({ userId: u.id, role: Number(v) })}
                    allowDeselect={false}
                    w={160}
                  />
                </Table.Td>
                <Table.Td>
                  <Button size="xs" color="red.9" variant="outline" onClick={() => window.confirm(`Remove ${nameOf(u)} from the project?`) && remove.mutate(u.id)} aria-label={`Remove ${nameOf(u)}`}>
                    Remove
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {users.isSuccess && (
        <form
          onSubmit={(e) => {
            e.preventDefault()
            add.mutate()
          }}
        >
          <Group align="end">
            <Select label="User to add" data={candidates} value={newUser} onChange={setNewUser} searchable required />
            <Select label="Project role" data={roles} value={newRole} onChange={setNewRole} required />
            <Button type="submit" loading={add.isPending} disabled={!newUser || !newRole}>
              Add member
            </Button>
          </Group>
        </form>
      )}
    </Stack>
  )
}
