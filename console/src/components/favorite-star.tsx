import { ActionIcon, Tooltip } from '@mantine/core'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { IconStar, IconStarFilled } from '@tabler/icons-react'
import { api, ok } from '../api/client'
import { projectKey } from '../api/projects'
import { flagKey } from './flag-details'

/**
 * The star of a flag (`flagName` given) or a project: the caller's favorite (`POST`/`DELETE …/favorites`, open to any
 * signed-in user). The dashboard lists what is starred; the page's own read says whether it is.
 */
export function FavoriteStar({ projectId, flagName, favorite }: { projectId: string; flagName?: string; favorite: boolean }) {
  const queryClient = useQueryClient()
  const name = flagName ?? projectId
  const toggle = useMutation({
    mutationFn: async () => {
      if (flagName !== undefined) {
        const params = { params: { path: { projectId, featureName: flagName } } }
        const path = '/api/admin/projects/{projectId}/features/{featureName}/favorites'
        await ok(favorite ? api.DELETE(path, params) : api.POST(path, params))
      } else {
        const params = { params: { path: { projectId } } }
        const path = '/api/admin/projects/{projectId}/favorites'
        await ok(favorite ? api.DELETE(path, params) : api.POST(path, params))
      }
    },
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: ['personal-dashboard'] }),
        queryClient.invalidateQueries({ queryKey: flagName !== undefined ? flagKey(projectId, flagName) : projectKey(projectId) }),
      ]),
  })
  const label = favorite ? `Remove ${name} from favourites` : `Add ${name} to favourites`
  return (
    <Tooltip label={label}>
      <ActionIcon variant="subtle" color={favorite ? 'yellow.9' : 'gray.7'} aria-label={`Favourite ${name}`} aria-pressed={favorite} loading={toggle.isPending} onClick={() => toggle.mutate()}>
        {favorite ? <IconStarFilled size={20} aria-hidden /> : <IconStar size={20} aria-hidden />}
      </ActionIcon>
    </Tooltip>
  )
}
