import { useState } from 'react'
import { Button, Card, Group, MultiSelect, Stack, Text, Title } from '@mantine/core'
import { useMutation, useQuery } from '@tanstack/react-query'
import { api, ok } from '../api/client'
import { useAllContextFields } from '../api/context-fields'
import { ErrorMessage } from '../components/error-message'
import { ContextBuilder, EMPTY_CONTEXT, PlaygroundResults, toContext, type ContextDraft } from '../components/playground'
import { PROJECTS_KEY, useEnvironments } from './projects'

/** The playground: a context evaluated against the flags of some projects in some environments, with why each came out as it did. */
export default function PlaygroundPage() {
  const environments = useEnvironments()
  const projects = useQuery({ queryKey: PROJECTS_KEY, queryFn: () => ok(api.GET('/api/admin/projects')) })
  const [context, setContext] = useState<ContextDraft>(EMPTY_CONTEXT)
  const [envs, setEnvs] = useState<string[]>([])
  const [projectIds, setProjectIds] = useState<string[]>([])
  const envNames = (environments.data?.environments ?? []).filter((e) => e.enabled).map((e) => e.name)
  const chosenEnvs = envs.length > 0 ? envs : envNames.slice(0, 1)
  // The global fields and those of the projects evaluated (every visible project's when none is chosen).
  const fields = (useAllContextFields().data ?? []).filter((f) => !f.project || projectIds.length === 0 || projectIds.includes(f.project))
  const run = useMutation({
    mutationFn: () =>
      ok(api.POST('/api/admin/playground/advanced', { body: { environments: chosenEnvs, projects: projectIds.length > 0 ? projectIds : '*', context: toContext(context) } })),
  })
  return (
    <Stack>
      <Title order={1}>Playground</Title>
      <Card withBorder>
        <form
          onSubmit={(e) => {
            e.preventDefault()
            run.mutate()
          }}
        >
          <Stack>
            <Group align="start">
              <MultiSelect label="Environments" description={`${chosenEnvs.join(', ') || 'none'} when none is chosen`} data={envNames} value={envs} onChange={setEnvs} w={300} />
              <MultiSelect label="Projects" description="Every project when none is chosen" data={(projects.data?.projects ?? []).map((p) => ({ value: p.id, label: p.name }))} value={projectIds} onChange={setProjectIds} w={300} searchable />
            </Group>
            <ContextBuilder value={context} onChange={setContext} fields={fields} />
            <Button type="submit" loading={run.isPending} disabled={!context.appName || chosenEnvs.length === 0} w="fit-content">
              Evaluate
            </Button>
          </Stack>
        </form>
      </Card>
      {run.isError && <ErrorMessage error={run.error} />}
      {run.data && (
        <section aria-label="Results">
          <Text size="sm" c="dimmed" mb="xs" aria-live="polite">
            {run.data.features.length} flags evaluated
          </Text>
          <PlaygroundResults response={run.data} />
        </section>
      )}
    </Stack>
  )
}
