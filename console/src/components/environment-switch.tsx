import { Switch } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, ok } from '../api/client'
import { projectFlagsQuery, projectOverviewQuery, switchedInList } from '../api/projects'

/**
 * A flag's switch in one environment, on the project's list and the flag's page (a module of its own: the flag page's
 * chunk does not carry the project page's).
 */
export function EnvironmentSwitch({ projectId, flagName, environment, enabled, label }: { projectId: string; flagName: string; environment: string; enabled: boolean; label?: string }) {
  const queryClient = useQueryClient()
  const toggle = useMutation({
    mutationFn: (on: boolean) => {
      const params = { path: { projectId, featureName: flagName, environment } }
      return ok(
        on
          ? api.POST('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on', { params })
          : api.POST('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off', { params }),
      )
    },
    onSuccess: (flag, on) => {
      queryClient.setQueryData(['flag', projectId, flagName], flag)
      // The rows that show the flag take the switch from the write's answer: no page of the list is read again.
      switchedInList(queryClient, projectId, flagName, environment, on)
      queryClient.setQueryData(projectFlagsQuery(projectId).queryKey, (flags) =>
        flags?.map((f) => (f.name === flagName ? { ...f, environments: f.environments.map((e) => (e.name === environment ? { ...e, enabled: on } : e)) } : f)),
      )
      void queryClient.invalidateQueries({ queryKey: projectOverviewQuery(projectId).queryKey })
    },
    onError: (error) => notifications.show({ title: `Could not switch ${flagName} in ${environment}`, message: error.message, color: 'red' }),
  })
  return (
    <Switch
      checked={toggle.isPending ? !!toggle.variables : enabled}
      disabled={toggle.isPending}
      onChange={(e) => toggle.mutate(e.currentTarget.checked)}
      aria-label={`${flagName} in ${environment}`}
      label={label}
    />
  )
}
