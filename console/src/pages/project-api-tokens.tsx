import { SdkSnippets } from '../components/sdk-snippets'
import { useState, type ReactNode } from 'react'
import { Anchor, Button, Select, TextInput } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link } from 'wouter'
import { useChange } from '../api/use-change'
import { api, ok } from '../api/client'
import { projectOverviewQuery } from '../api/projects'
import { useAllows } from '../api/session'
import { DeleteButton, ListPage, MutationForm } from '../components/list-page'
import { SecretFormDialog } from '../components/secret-dialog'
import { TokenTable, type ApiToken } from '../components/token-table'
import { projectPath } from '../paths'

const tokensKey = (projectId: string) => ['projects', projectId, 'api-tokens'] as const

const TYPES = [
  { value: 'client', label: 'Backend SDK (client)' },
  { value: 'frontend', label: 'Frontend SDK' },
] as const

/**
 * A project's API tokens (`/api/admin/projects/{projectId}/api-tokens`): those naming the project, by their masked
 * secrets; new ones for exactly this project, the secret shown once; only those for it alone are deleted here.
 */
export default function ProjectApiTokensPage({ projectId }: { projectId: string }) {
  const allows = useAllows()
  const key = tokensKey(projectId)
  const tokens = useQuery({ queryKey: key, queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/api-tokens', { params: { path: { projectId } } })) })
  const [creating, setCreating] = useState(false)
  const remove = useChange(
    (token: ApiToken) => ok(api.DELETE('/api/admin/projects/{projectId}/api-tokens/{token}', { params: { path: { projectId, token: token.secret } } })),
    key,
    (token) => `Token ${token.tokenName} deleted`,
  )
  const mayDelete = allows('DELETE_PROJECT_API_TOKEN', projectId)
  return (
    <ListPage
      title={`API tokens of ${projectId}`}
      load={tokens}
      under={
        <Anchor component={Link} href={projectPath(projectId)} size="sm">
          Back to project {projectId}
        </Anchor>
      }
      action={allows('CREATE_PROJECT_API_TOKEN', projectId) && <Button onClick={() => setCreating(true)}>Create API token</Button>}
      error={remove.error}
      dialogs={
        <SecretFormDialog opened={creating} onClose={() => setCreating(false)} title="Create API token" secretTitle="Your new API token">
          {(created) => <CreateProjectTokenForm projectId={projectId} onCreated={created} />}
        </SecretFormDialog>
      }
    >
      {(data) => (
        <TokenTable
          tokens={data.tokens}
          empty="No API tokens for this project yet."
          actions={(t) =>
            mayDelete && t.projects.length === 1 && <DeleteButton label={`Delete token ${t.tokenName}`} confirm={`Delete the token ${t.tokenName}? SDKs using it stop working.`} onDelete={() => remove.mutate(t)} />
          }
        />
      )}
    </ListPage>
  )
}

function CreateProjectTokenForm({ projectId, onCreated }: { projectId: string; onCreated: (secret: string, more?: ReactNode) => void }) {
  const queryClient = useQueryClient()
  const overview = useQuery(projectOverviewQuery(projectId))
  const environments = (overview.data?.environments ?? []).map((e) => e.environment)
  const [tokenName, setTokenName] = useState('')
  const [type, setType] = useState<string>('client')
  const [environment, setEnvironment] = useState<string | null>(null)
  const chosen = environment ?? environments[0] ?? 'development'
  const create = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/projects/{projectId}/api-tokens', { params: { path: { projectId } }, body: { tokenName, type, environment: chosen } })),
    onSuccess: async (token) => {
      await queryClient.invalidateQueries({ queryKey: tokensKey(projectId) })
      onCreated(token.secret, <SdkSnippets type={token.type} secret={token.secret} />)
    },
  })
  return (
    <MutationForm mutation={create} submit="Create">
      <TextInput label="Name" required value={tokenName} onChange={(e) => setTokenName(e.currentTarget.value)} />
      <Select label="Type" data={[...TYPES]} value={type} onChange={(v) => v && setType(v)} allowDeselect={false} />
      <Select label="Environment" data={environments} value={chosen} onChange={setEnvironment} allowDeselect={false} />
    </MutationForm>
  )
}
