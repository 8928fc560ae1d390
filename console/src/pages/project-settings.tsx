import { useEffect } from 'react'
import { Alert, Anchor, Badge, Button, Card, Group, Stack, Text, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, ok } from '../api/client'
import { projectKey, projectOverviewQuery } from '../api/projects'
import { useAllows } from '../api/session'
import { ChangeRequestSettings } from '../components/change-request-settings'
import { ErrorMessage, PageError } from '../components/error-message'
import { Loading } from '../components/loading'
import { ProjectAccess } from '../components/project-access'
import { projectPath } from '../paths'

/**
 * A project's settings (`/projects/:projectId/settings`), as Unleash keeps them on a page of their own: its members and
 * roles, its environments and its change request settings, for those who may UPDATE_PROJECT; others are told they may
 * not (the API refuses their changes all the same). An archived project's settings are not changed until it is revived.
 */
export default function ProjectSettingsPage({ projectId }: { projectId: string }) {
  const allows = useAllows()
  const overview = useQuery(projectOverviewQuery(projectId))
  const title = `${overview.data?.name ?? projectId} · Settings`
  // The shell names the page by its address (the project's id) as it renders; the project's name replaces it once
  // known, after the shell's own effect (a child's effects run before its parent's).
  useEffect(() => {
    const timer = setTimeout(() => {
      document.title = `${title} · Flagpost`
    })
    return () => clearTimeout(timer)
  }, [title])
  if (overview.isPending) return <Loading />
  if (overview.isError) return <PageError title="Settings" error={overview.error} />
  const project = overview.data
  return (
    <Stack>
      <div>
        <Title order={1}>{title}</Title>
        <Anchor component={Link} href={projectPath(projectId)} size="sm">
          Back to project {project.name}
        </Anchor>
      </div>
      {!allows('UPDATE_PROJECT', projectId) ? (
        <Text>You may not change this project&apos;s settings.</Text>
      ) : project.archivedAt ? (
        <Alert color="gray">This project is archived: revive it to change its settings.</Alert>
      ) : (
        <>
          <ProjectAccess projectId={projectId} />
          <ProjectEnvironments projectId={projectId} environments={project.environments.map((e) => e.environment)} />
          <ChangeRequestSettings projectId={projectId} />
        </>
      )}
    </Stack>
  )
}

/** The project's environments, each removable (`DELETE …/environments/{environment}`) with the flags' configuration there. */
function ProjectEnvironments({ projectId, environments }: { projectId: string; environments: string[] }) {
  const allows = useAllows()
  const queryClient = useQueryClient()
  const remove = useMutation({
    mutationFn: (environment: string) => ok(api.DELETE('/api/admin/projects/{projectId}/environments/{environment}', { params: { path: { projectId, environment } } })),
    onSuccess: async (_, environment) => {
      await Promise.all([queryClient.invalidateQueries({ queryKey: projectKey(projectId) }), queryClient.invalidateQueries({ queryKey: ['projects'] })])
      notifications.show({ message: `Environment ${environment} removed from ${projectId}`, color: 'green' })
    },
  })
  return (
    <Card withBorder component="section" aria-labelledby="project-environments">
      <Title order={2} size="h4" id="project-environments">
        Environments
      </Title>
      {remove.isError && <ErrorMessage error={remove.error} />}
      <Group gap="xs" mt="xs">
        {environments.map((env) => (
          <Group key={env} gap={4} wrap="nowrap">
            <Badge variant="light">{env}</Badge>
            {allows('UPDATE_PROJECT', projectId, env) && (
              <Button
                size="compact-xs"
                variant="subtle"
                // Red text on a grey hover tint: red's own tint under the pointer leaves the text below AA contrast.
                color="gray"
                c="red.9"
                loading={remove.isPending && remove.variables === env}
                onClick={() => window.confirm(`Remove ${env} from ${projectId}? Its flags lose their switches, strategies and variants there.`) && remove.mutate(env)}
                aria-label={`Remove environment ${env} from the project`}
              >
                Remove
              </Button>
            )}
          </Group>
        ))}
      </Group>
    </Card>
  )
}
