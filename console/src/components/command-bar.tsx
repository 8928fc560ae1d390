import { useEffect, useMemo, useState, type ComponentType } from 'react'
import { Group, Stack, Text, TextInput, UnstyledButton } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { useQuery } from '@tanstack/react-query'
import { IconFlag, IconFolder, IconPlus, IconSearch } from '@tabler/icons-react'
import { useLocation } from 'wouter'
import { api, ok } from '../api/client'
import { allowsSomewhere, useMe } from '../api/session'
import { visibleGroups } from '../navigation'
import { flagPath, projectPath, projectOfPath } from '../paths'
import { Dialog } from './dialog'
import classes from './command-bar.module.css'

interface Item {
  id: string
  kind: 'Flag' | 'Project' | 'Page' | 'Action'
  label: string
  detail?: string
  href: string
  icon: ComponentType<{ size?: number; 'aria-hidden'?: boolean }>
}

const MAX_FLAGS = 8

/**
 * The command bar (Ctrl-K or "/"): flags of every project the user may read (the server's flag search, as they type),
 * projects, the pages of the navigation and a few actions, chosen with the arrows and Enter or the pointer.
 */
export function CommandBar({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  return (
    <Dialog opened={opened} onClose={onClose} title="Search Flagpost" size="lg">
      {opened && <CommandSearch onClose={onClose} />}
    </Dialog>
  )
}

function CommandSearch({ onClose }: { onClose: () => void }) {
  const [text, setText] = useState('')
  const [active, setActive] = useState(0)
  const [query] = useDebouncedValue(text.trim(), 150)
  const [location, navigate] = useLocation()
  const me = useMe().data
  const allows = (permission: string) => allowsSomewhere(me?.permissions, permission)

  const flags = useQuery({
    queryKey: ['command-bar', 'flags', query],
    queryFn: () => ok(api.GET('/api/admin/search/features', { params: { query: { query, limit: String(MAX_FLAGS), sortBy: 'name', sortOrder: 'asc' } } })),
    enabled: query.length > 0,
    staleTime: 5_000,
  })
  const projects = useQuery({ queryKey: ['command-bar', 'projects'], queryFn: () => ok(api.GET('/api/admin/projects')), staleTime: 30_000 })

  const items = useMemo<Item[]>(() => {
    const needle = text.trim().toLowerCase()
    const matches = (...values: (string | undefined | null)[]) => needle === '' || values.some((v) => v?.toLowerCase().includes(needle))
    const currentProject = projectOfPath(location) ?? 'default'
    const actions: Item[] = [
      ...(allows('CREATE_FEATURE') ? [{ id: 'action:flag', kind: 'Action' as const, label: 'Create flag', detail: `in ${currentProject}`, href: `${projectPath(currentProject)}?create=flag`, icon: IconPlus }] : []),
      ...(allows('CREATE_PROJECT') ? [{ id: 'action:project', kind: 'Action' as const, label: 'Create project', href: '/projects?create=project', icon: IconPlus }] : []),
      ...(allows('CREATE_CLIENT_API_TOKEN') || allows('CREATE_FRONTEND_API_TOKEN')
        ? [{ id: 'action:token', kind: 'Action' as const, label: 'New API token', href: '/api-tokens?create=token', icon: IconPlus }]
        : []),
    ].filter((a) => matches(a.label))
    const pages: Item[] = visibleGroups(me?.permissions)
      .flatMap((g) => g.pages.map((p) => ({ id: `page:${p.href}`, kind: 'Page' as const, label: p.label, detail: g.label, href: p.href, icon: p.icon })))
      .filter((p) => matches(p.label))
    const flagItems: Item[] =
      needle && flags.data
        ? flags.data.features.map((f) => ({ id: `flag:${f.project}/${f.name}`, kind: 'Flag' as const, label: f.name, detail: f.project, href: flagPath(f.project, f.name), icon: IconFlag }))
        : []
    const projectItems: Item[] = (projects.data?.projects ?? [])
      .filter((p) => matches(p.id, p.name))
      .slice(0, needle ? 8 : 5)
      .map((p) => ({ id: `project:${p.id}`, kind: 'Project' as const, label: p.name, detail: p.id, href: projectPath(p.id), icon: IconFolder }))
    return [...flagItems, ...projectItems, ...actions, ...pages]
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [text, flags.data, projects.data, me, location])

  useEffect(() => setActive(0), [items.length, text])

  const choose = (item: Item | undefined) => {
    if (!item) return
    onClose()
    navigate(item.href)
  }

  return (
    <Stack gap="xs">
      <TextInput
        data-autofocus
        label="Search flags, projects, pages and actions"
        placeholder="Type a flag's or a project's name…"
        leftSection={<IconSearch size={16} aria-hidden />}
        value={text}
        onChange={(e) => setText(e.currentTarget.value)}
        role="combobox"
        aria-expanded
        aria-controls="command-bar-results"
        aria-autocomplete="list"
        aria-activedescendant={items[active] ? `command-${active}` : undefined}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') {
            e.preventDefault()
            setActive((i) => Math.min(items.length - 1, i + 1))
          } else if (e.key === 'ArrowUp') {
            e.preventDefault()
            setActive((i) => Math.max(0, i - 1))
          } else if (e.key === 'Enter') {
            e.preventDefault()
            choose(items[active])
          }
        }}
      />
      <Text size="xs" c="dimmed" role="status">
        {flags.isFetching ? 'Searching flags…' : `${items.length} ${items.length === 1 ? 'result' : 'results'}`}
      </Text>
      <div id="command-bar-results" role="listbox" aria-label="Results" className={classes.list}>
        {items.map((item, i) => {
          const Icon = item.icon
          return (
            <UnstyledButton
              key={item.id}
              id={`command-${i}`}
              role="option"
              aria-selected={i === active}
              tabIndex={-1}
              className={classes.item}
              data-active={i === active || undefined}
              onMouseEnter={() => setActive(i)}
              onClick={() => choose(item)}
            >
              <Group gap="sm" wrap="nowrap">
                <Icon size={18} aria-hidden />
                <Text size="sm" fw={500} className={classes.label}>
                  {item.label}
                </Text>
                {item.detail && (
                  <Text size="xs" c="dimmed" className={classes.label}>
                    {item.detail}
                  </Text>
                )}
                <Text size="xs" c="dimmed" ml="auto">
                  {item.kind}
                </Text>
              </Group>
            </UnstyledButton>
          )
        })}
      </div>
    </Stack>
  )
}
