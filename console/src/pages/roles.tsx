import { useState } from 'react'
import { Badge, Button, Checkbox, SegmentedControl, Stack, Table, Text, TextInput, Textarea } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useChange } from '../api/use-change'
import { api, ok, type Schemas } from '../api/client'
import { ErrorMessage } from '../components/error-message'
import { DeleteButton, EditDialog, ListPage, MutationForm, RowButton, RowTable } from '../components/list-page'
import { Loading } from '../components/loading'

type Role = Schemas['roleSchema']
type Permission = Schemas['adminPermissionSchema']
type CustomType = 'custom' | 'root-custom'
const ROLES_KEY = ['roles'] as const

const TYPE_LABELS: Record<string, string> = { root: 'Root (built in)', project: 'Project (built in)', 'root-custom': 'Custom root', custom: 'Custom project' }
const isCustom = (role: Role) => role.type === 'custom' || role.type === 'root-custom'

/** Roles: the built-in ones, and custom roles an admin makes from the permission list. Admins only. */
export default function RolesPage() {
  const roles = useQuery({ queryKey: ROLES_KEY, queryFn: () => ok(api.GET('/api/admin/roles')) })
  const [editing, setEditing] = useState<Role | 'new'>()
  const remove = useChange((r: Role) => ok(api.DELETE('/api/admin/roles/{roleId}', { params: { path: { roleId: String(r.id) } } })), ROLES_KEY, (r) => `Role ${r.name} deleted`)
  return (
    <ListPage
      title="Roles"
      load={roles}
      action={<Button onClick={() => setEditing('new')}>Create role</Button>}
      intro="Root roles apply everywhere; project roles are given to users and groups in a project. Built-in roles cannot be changed."
      error={remove.error}
      dialogs={
        <EditDialog editing={editing} onClose={() => setEditing(undefined)} title={(r) => (r ? `Edit role ${r.name}` : 'Create role')} size="xl">
          {(r) => <RoleForm role={r} onDone={() => setEditing(undefined)} />}
        </EditDialog>
      }
    >
      {(data) => (
        <RowTable
          rows={data.roles}
          rowKey={(r) => r.id}
          empty="No roles."
          columns={[
            { header: 'Name', cell: (r) => r.name },
            {
              header: 'Type',
              cell: (r) => (
                <Badge variant="light" color={isCustom(r) ? 'blue' : 'gray'}>
                  {TYPE_LABELS[r.type] ?? r.type}
                </Badge>
              ),
            },
            { header: 'Description', cell: (r) => r.description },
          ]}
          actions={(r) =>
            isCustom(r) && (
              <>
                <RowButton label={`Edit role ${r.name}`} onClick={() => setEditing(r)}>
                  Edit
                </RowButton>
                <DeleteButton label={`Delete role ${r.name}`} confirm={`Delete the role ${r.name}?`} onDelete={() => remove.mutate(r)} />
              </>
            )
          }
        />
      )}
    </ListPage>
  )
}

/** A held permission as the form keeps it: the name, and `@environment` when it holds in one environment only. */
const keyOf = (p: { name: string; environment?: string | null }) => (p.environment ? `${p.name}@${p.environment}` : p.name)

function RoleForm({ role, onDone }: { role?: Role; onDone: () => void }) {
  const queryClient = useQueryClient()
  const permissions = useQuery({ queryKey: ['permissions'], queryFn: () => ok(api.GET('/api/admin/permissions')) })
  const held = useQuery({
    queryKey: ['roles', role?.id],
    queryFn: () => ok(api.GET('/api/admin/roles/{roleId}', { params: { path: { roleId: String(role!.id) } } })),
    enabled: role !== undefined,
  })
  if (permissions.isPending || (role && held.isPending)) return <Loading />
  if (permissions.isError) return <ErrorMessage error={permissions.error} />
  if (held.isError) return <ErrorMessage error={held.error} />
  return (
    <RoleEditor
      role={role}
      initial={new Set((held.data?.permissions ?? []).map(keyOf))}
      available={permissions.data.permissions}
      onSaved={async (name) => {
        await queryClient.invalidateQueries({ queryKey: ROLES_KEY })
        notifications.show({ message: `Role ${name} saved`, color: 'green' })
        onDone()
      }}
    />
  )
}

type Available = Schemas['adminPermissionsSchema']['permissions']

function RoleEditor({ role, initial, available, onSaved }: { role?: Role; initial: Set<string>; available: Available; onSaved: (name: string) => Promise<void> }) {
  const [name, setName] = useState(role?.name ?? '')
  const [description, setDescription] = useState(role?.description ?? '')
  const [type, setType] = useState<CustomType>((role?.type as CustomType | undefined) ?? 'custom')
  const [chosen, setChosen] = useState(initial)
  const toggle = (key: string, on: boolean) => setChosen((before) => (on ? new Set([...before, key]) : new Set([...before].filter((k) => k !== key))))
  const save = useMutation({
    mutationFn: () => {
      const allowed = new Set(type === 'root-custom' ? available.root.map((p) => p.name) : [...available.project, ...(available.environments[0]?.permissions ?? [])].map((p) => p.name))
      const permissions = [...chosen]
        .map((key) => {
          const [permission, environment] = key.split('@') as [string, string | undefined]
          return { name: permission, ...(environment ? { environment } : {}) }
        })
        .filter((p) => allowed.has(p.name))
      const body = { name, description, type, permissions }
      return role ? ok(api.PUT('/api/admin/roles/{roleId}', { params: { path: { roleId: String(role.id) } }, body })) : ok(api.POST('/api/admin/roles', { body }))
    },
    onSuccess: () => onSaved(name),
  })
  const environmentPermissions = available.environments[0]?.permissions ?? []
  return (
    <MutationForm mutation={save} submit="Save role">
      <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
      <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
      <Stack gap={4}>
        <Text size="sm" fw={500} id="role-type-label">
          Role type
        </Text>
        <SegmentedControl
          aria-labelledby="role-type-label"
          value={type}
          onChange={(v) => setType(v as CustomType)}
          data={[
            { value: 'custom', label: 'Project role' },
            { value: 'root-custom', label: 'Root role' },
          ]}
        />
        {role !== undefined && (
          <Text size="xs" c="dimmed">
            The type changes only while nobody holds the role.
          </Text>
        )}
      </Stack>
      {type === 'root-custom' ? (
        <PermissionGroup title="Root permissions" permissions={available.root} chosen={chosen} toggle={toggle} />
      ) : (
        <>
          <PermissionGroup title="Project permissions" permissions={available.project} chosen={chosen} toggle={toggle} />
          <Stack gap={4} component="fieldset" style={{ border: 0, padding: 0, margin: 0 }}>
            <Text component="legend" fw={700} size="sm">
              Environment permissions
            </Text>
            <Text size="xs" c="dimmed">
              In every environment, or only in those ticked.
            </Text>
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Permission</Table.Th>
                  <Table.Th>Every environment</Table.Th>
                  {available.environments.map((env) => (
                    <Table.Th key={env.name}>{env.name}</Table.Th>
                  ))}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {environmentPermissions.map((p) => (
                  <Table.Tr key={p.name}>
                    <Table.Td>{p.displayName}</Table.Td>
                    <Table.Td>
                      <Checkbox aria-label={`${p.displayName} in every environment`} checked={chosen.has(p.name)} onChange={(e) => toggle(p.name, e.currentTarget.checked)} />
                    </Table.Td>
                    {available.environments.map((env) => {
                      const key = keyOf({ name: p.name, environment: env.name })
                      return (
                        <Table.Td key={env.name}>
                          <Checkbox
                            aria-label={`${p.displayName} in ${env.name}`}
                            checked={chosen.has(p.name) || chosen.has(key)}
                            disabled={chosen.has(p.name)}
                            onChange={(e) => toggle(key, e.currentTarget.checked)}
                          />
                        </Table.Td>
                      )
                    })}
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Stack>
        </>
      )}
    </MutationForm>
  )
}

function PermissionGroup({ title, permissions, chosen, toggle }: { title: string; permissions: Permission[]; chosen: Set<string>; toggle: (key: string, on: boolean) => void }) {
  return (
    <Stack gap={6} component="fieldset" style={{ border: 0, padding: 0, margin: 0 }}>
      <Text component="legend" fw={700} size="sm" mb={4}>
        {title}
      </Text>
      {permissions.map((p) => (
        <Checkbox key={p.name} label={p.displayName} description={p.name} checked={chosen.has(p.name)} onChange={(e) => toggle(p.name, e.currentTarget.checked)} />
      ))}
    </Stack>
  )
}
