import { useRef, useState } from 'react'
import { Autocomplete, Button, Group, Select, Stack, Text, TextInput, Title } from '@mantine/core'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { api, ok } from '../api/client'
import { ErrorMessage } from '../components/error-message'
import { Loading } from '../components/loading'
import { EventCard } from '../components/event-card'
import { COMMON_EVENT_TYPES } from '../event-types'
import { PROJECTS_KEY } from './projects'

const PAGE = 50

interface Filters {
  query: string
  feature: string
  project: string | null
  type: string
  createdBy: string
  from: string
  to: string
}
const EMPTY: Filters = { query: '', feature: '', project: null, type: '', createdBy: '', from: '', to: '' }

/** The event search (`GET /api/admin/search/events`) with its filters; each change shown as a diff. */
export default function EventsPage() {
  const [draft, setDraft] = useState<Filters>(EMPTY)
  const [filters, setFilters] = useState<Filters>(EMPTY)
  const [offset, setOffset] = useState(0)
  const projects = useQuery({ queryKey: PROJECTS_KEY, queryFn: () => ok(api.GET('/api/admin/projects')) })
  const query = {
    ...(filters.query ? { query: filters.query } : {}),
    ...(filters.feature ? { feature: `IS:${filters.feature}` } : {}),
    ...(filters.project ? { project: `IS:${filters.project}` } : {}),
    ...(filters.type ? { type: `IS:${filters.type}` } : {}),
    ...(filters.createdBy ? { createdBy: filters.createdBy } : {}),
    ...(filters.from ? { from: `IS:${filters.from}` } : {}),
    ...(filters.to ? { to: `IS:${filters.to}` } : {}),
    offset: String(offset),
    limit: String(PAGE),
  }
  const events = useQuery({
    queryKey: ['events', query],
    queryFn: () => ok(api.GET('/api/admin/search/events', { params: { query } })),
    placeholderData: keepPreviousData,
  })
  const set = (patch: Partial<Filters>) => setDraft({ ...draft, ...patch })
  const countRef = useRef<HTMLParagraphElement>(null)
  // Newer and Older show the new page from its first event: the count line takes the focus, at the top of the window.
  const turnTo = (next: number) => {
    setOffset(next)
    window.scrollTo({ top: 0 })
    countRef.current?.focus({ preventScroll: true })
  }
  return (
    <Stack>
      <Title order={1}>Event log</Title>
      <form
        onSubmit={(e) => {
          e.preventDefault()
          setOffset(0)
          setFilters(draft)
        }}
      >
        <Group align="end">
          <TextInput label="Text" placeholder="Anywhere in the change" value={draft.query} onChange={(e) => set({ query: e.currentTarget.value })} />
          <TextInput label="Flag" value={draft.feature} onChange={(e) => set({ feature: e.currentTarget.value })} />
          <Select label="Project" placeholder="Any project" data={(projects.data?.projects ?? []).map((p) => ({ value: p.id, label: p.name }))} value={draft.project} onChange={(v) => set({ project: v })} clearable searchable />
          <Autocomplete label="Type" placeholder="Any type" data={COMMON_EVENT_TYPES} value={draft.type} onChange={(v) => set({ type: v })} />
          <TextInput label="User" description="Id or name" value={draft.createdBy} onChange={(e) => set({ createdBy: e.currentTarget.value })} />
          <TextInput label="From" type="date" value={draft.from} onChange={(e) => set({ from: e.currentTarget.value })} />
          <TextInput label="To" type="date" value={draft.to} onChange={(e) => set({ to: e.currentTarget.value })} />
          <Button type="submit">Search</Button>
        </Group>
      </form>
      {events.isPending ? (
        <Loading />
      ) : events.isError ? (
        <ErrorMessage error={events.error} />
      ) : (
        <>
          <Text size="sm" c="dimmed" aria-live="polite" ref={countRef} tabIndex={-1}>
            {events.data.total === 0 ? 'No events match' : `Events ${offset + 1}–${offset + events.data.events.length} of ${events.data.total}`}
          </Text>
          {events.data.events.map((event) => (
            <EventCard key={event.id} event={event} />
          ))}
          <Group>
            <Button variant="default" disabled={offset === 0} onClick={() => turnTo(Math.max(0, offset - PAGE))}>
              Newer
            </Button>
            <Button variant="default" disabled={offset + PAGE >= events.data.total} onClick={() => turnTo(offset + PAGE)}>
              Older
            </Button>
          </Group>
        </>
      )}
    </Stack>
  )
}
