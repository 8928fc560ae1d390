import { useState } from 'react'
import { Button, Radio, Select, Stack, Text } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation } from '@tanstack/react-query'
import { api, ok } from '../api/client'
import { ErrorMessage } from './error-message'

type Scope = 'selected' | 'shown' | 'all'

/**
 * What the flags table hands the export: the names selected, the flags its filters show, and how many flags the project
 * has. The filters' flags are either names the table holds (`shown`) or, for a list paged on the server, the flag
 * search's query of the filters (`filter`, without paging) and how many flags match it (`matching`): the names are then
 * asked of the server when exporting, every page of them, not only the page on screen.
 */
export interface ExportChoice {
  selected: string[]
  shown: string[]
  total: number
  filter?: { query: Record<string, string>; matching: number }
}

/** The most names one export takes (the route's bound on `features`). */
export const EXPORT_NAMES_LIMIT = 1000

/** The names of every flag the flag search's query matches (one read: at most EXPORT_NAMES_LIMIT of them). */
async function namesMatching(query: Record<string, string>): Promise<string[]> {
  const found = await ok(api.GET('/api/admin/search/features', { params: { query: { ...query, limit: String(EXPORT_NAMES_LIMIT), offset: '0' } } }))
  return found.features.map((f) => f.name)
}

/** The file an export is saved as: `<project>-<environment>.json`, with anything a file name should not hold replaced. */
export const exportFileName = (projectId: string, environment: string) => `${projectId}-${environment}.json`.replace(/[^\w.-]+/g, '_')

/**
 * Saves JSON as a file from the browser: a Blob behind an object URL, clicked as a link with `download` (the
 * console's Content-Security-Policy allows no other origin, and a download is no fetch). The URL is freed a while
 * later, not at once: the browser reads the Blob after the click returns.
 */
function downloadJson(data: unknown, fileName: string) {
  const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }))
  const link = document.createElement('a')
  link.href = url
  link.download = fileName
  link.hidden = true
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}

const scopeTooBig = (filter: ExportChoice['filter']) => filter !== undefined && filter.matching > EXPORT_NAMES_LIMIT

const flags = (n: number) => (n === 1 ? '1 flag' : `${n} flags`)

/**
 * Exports flags of the project from one environment (`POST /api/admin/features-batch/export`): the selection, the
 * flags the table's filters show (by name, tag, type or staleness), or all of the project's; the answer is saved as
 * a JSON file that the project import, here or in Unleash, takes.
 */
export default function ExportFlagsForm({ projectId, environments, choice, onDone }: { projectId: string; environments: string[]; choice: ExportChoice; onDone: () => void }) {
  const { selected, shown, total, filter } = choice
  const matching = filter ? filter.matching : shown.length
  const filtered = matching > 0 && matching < total
  const tooMany = scopeTooBig(filter)
  const [scope, setScope] = useState<Scope>(selected.length > 0 ? 'selected' : filtered && !tooMany ? 'shown' : 'all')
  const [environment, setEnvironment] = useState<string | null>(environments[0] ?? null)
  const exported = useMutation({
    mutationFn: async (environment: string) => {
      const names = scope === 'selected' ? selected : scope === 'shown' ? (filter ? await namesMatching(filter.query) : shown) : []
      // An empty `features` would select every flag the caller sees: the whole project is asked for by its id.
      const body = scope === 'all' || names.length === total ? { environment, project: projectId } : { environment, features: names }
      return ok(api.POST('/api/admin/features-batch/export', { body }))
    },
    onSuccess: (data, environment) => {
      const fileName = exportFileName(projectId, environment)
      downloadJson(data, fileName)
      notifications.show({ message: `Exported ${flags(data.features.length)} of ${projectId} in ${environment} to ${fileName}`, color: 'green' })
      onDone()
    },
  })
  const count = scope === 'selected' ? selected.length : scope === 'shown' ? matching : total
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        if (environment) exported.mutate(environment)
      }}
    >
      <Stack>
        {exported.isError && <ErrorMessage error={exported.error} />}
        <Radio.Group label="Flags to export" value={scope} onChange={(v) => setScope(v as Scope)}>
          <Stack gap="xs" mt="xs">
            {selected.length > 0 && <Radio value="selected" label={`The ${flags(selected.length)} selected`} />}
            {filtered && (
              <Radio
                value="shown"
                label={`The ${flags(matching)} the filters show`}
                description={tooMany ? `At most ${EXPORT_NAMES_LIMIT} flags a file: narrow the filters, or export the whole project` : undefined}
                disabled={tooMany}
              />
            )}
            <Radio value="all" label={`All ${flags(total)} of the project`} />
          </Stack>
        </Radio.Group>
        <Select
          label="Environment"
          description="Strategies, switch and variants are exported from this environment"
          data={environments}
          value={environment}
          onChange={setEnvironment}
          allowDeselect={false}
          required
        />
        <Text size="sm" c="dimmed">
          The file holds the flags with their tags, strategies, variants and dependencies, and the segments, context fields and tag types they use: import it into a project here or in Unleash.
        </Text>
        <Button type="submit" disabled={!environment || count === 0 || (scope === 'shown' && tooMany)} loading={exported.isPending}>
          Export {flags(count)}
        </Button>
      </Stack>
    </form>
  )
}
