import { MultiSelect } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { api, ok } from '../api/client'
import { PICKER_PAGE, useServerSearch } from './server-select'

/** The names of the given segments (one bounded read by id), for a strategy's summary and a picker's chosen values. */
export function useSegmentNames(ids: readonly number[]) {
  const sorted = [...new Set(ids)].sort((a, b) => a - b)
  const names = useQuery({
    queryKey: ['segments', 'names', sorted.join(',')],
    queryFn: () => ok(api.GET('/api/admin/segments', { params: { query: { id: sorted.join(',') } } })),
    enabled: sorted.length > 0,
    staleTime: 30_000,
  })
  const byId = new Map((names.data?.segments ?? []).map((s) => [s.id, s.name]))
  return (id: number) => byId.get(id) ?? `segment ${id}`
}

/** The segments a strategy of `project` uses, found on the server as the user types (global and the project's own). */
export function SegmentPicker({ project, value, onChange }: { project: string; value: string[]; onChange: (value: string[]) => void }) {
  const { found, question, props: searching } = useServerSearch(['segments', project], async (query) =>
    (await ok(api.GET('/api/admin/segments', { params: { query: { project, query: query || undefined, limit: String(PICKER_PAGE) } } }))).segments,
  )
  const nameOf = useSegmentNames(value.map(Number))
  const options = found.data ?? []
  const shown = new Set(options.map((s) => String(s.id)))
  const data = [...value.filter((id) => !shown.has(id)).map((id) => ({ value: id, label: nameOf(Number(id)) })), ...options.map((s) => ({ value: String(s.id), label: s.name }))]
  const none = found.isSuccess && question === '' && options.length === 0
  return (
    <MultiSelect
      {...searching}
      label="Segments"
      description={none ? 'No segments exist yet' : 'Every constraint of each segment must match too. Type to find one.'}
      placeholder={value.length === 0 ? 'Type a segment name' : undefined}
      data={data}
      value={value}
      onChange={onChange}
    />
  )
}
