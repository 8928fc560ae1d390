import { useState } from 'react'
import { MultiSelect } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { api, ok } from '../api/client'
import { PICKER_PAGE } from './server-select'

type SegmentName = { id: number; name: string }

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

/**
 * The segments a strategy of `project` uses: the options are the server's answer to what was typed (global segments and
 * the project's own, at most PICKER_PAGE, 200 ms debounce), never the whole list, whatever there are thousands of.
 */
export function SegmentPicker({ project, value, onChange }: { project: string; value: string[]; onChange: (value: string[]) => void }) {
  const [text, setText] = useState('')
  const [typed] = useDebouncedValue(text.trim(), 200)
  const found = useQuery({
    queryKey: ['segments', 'picker', project, typed],
    queryFn: () => ok(api.GET('/api/admin/segments', { params: { query: { project, query: typed || undefined, limit: String(PICKER_PAGE) } } })),
    placeholderData: keepPreviousData,
    staleTime: 10_000,
  })
  const nameOf = useSegmentNames(value.map(Number))
  const options: SegmentName[] = found.data?.segments ?? []
  const shown = new Set(options.map((s) => String(s.id)))
  const data = [...value.filter((id) => !shown.has(id)).map((id) => ({ value: id, label: nameOf(Number(id)) })), ...options.map((s) => ({ value: String(s.id), label: s.name }))]
  const none = found.isSuccess && typed === '' && options.length === 0
  return (
    <MultiSelect
      label="Segments"
      description={none ? 'No segments exist yet' : 'Every constraint of each segment must match too. Type to find one.'}
      placeholder={value.length === 0 ? 'Type a segment name' : undefined}
      data={data}
      value={value}
      onChange={onChange}
      searchable
      searchValue={text}
      onSearchChange={setText}
      // The server already searched.
      filter={({ options: all }) => all}
      nothingFoundMessage={found.isFetching ? 'Searching…' : 'Nothing found'}
    />
  )
}
