import type { CSSProperties, ReactNode } from 'react'
import { Button, Group, Stack, Table, Text, Title, VisuallyHidden } from '@mantine/core'
import { Dialog } from './dialog'
import { ErrorMessage, PageError } from './error-message'
import { Loading } from './loading'

/** What a page waits for: a TanStack query's result, or several joined by `allOf`. */
export interface Loadable<T> {
  isPending: boolean
  error: unknown
  data: T | undefined
}

/** Several queries as one: pending while any is, failed when one failed, then all their data in order. */
export function allOf<T extends unknown[]>(...queries: { [K in keyof T]: Loadable<T[K]> }): Loadable<T> {
  return {
    isPending: queries.some((q) => q.isPending),
    error: queries.find((q) => q.error)?.error ?? null,
    data: queries.every((q) => q.data !== undefined) ? (queries.map((q) => q.data) as T) : undefined,
  }
}

/**
 * The frame of an admin list page: loading until `load` has its data, the title and the error alone if it could not be
 * read; then the title (with what is under it) and the page's main action beside it, a line saying what the page is
 * for, the error of the page's last write, and the content made of the data. `dialogs` are there whatever the state of
 * the data, so that a secret shown once is not lost when the list's refresh fails.
 */
interface Frame {
  title: string
  /** The page's main action (a create button), beside the title. */
  action?: ReactNode
  /** Under the title, such as a link back. */
  under?: ReactNode
  intro?: ReactNode
  /** The error of the page's last write. */
  error?: unknown
}

export function ListPage<T>({ load, dialogs, children, ...frame }: Frame & { load: Loadable<T>; dialogs?: ReactNode; children: (data: T) => ReactNode }) {
  return (
    <>
      {load.isPending ? <Loading /> : load.error || load.data === undefined ? <PageError title={frame.title} error={load.error} /> : <ListFrame {...frame} content={children(load.data)} />}
      {dialogs}
    </>
  )
}

function ListFrame({ title, action, under, intro, error, content }: Frame & { content: ReactNode }) {
  const heading = <Title order={1}>{title}</Title>
  return (
    <Stack>
      <Group justify="space-between">
        {under ? (
          <div>
            {heading}
            {under}
          </div>
        ) : (
          heading
        )}
        {action}
      </Group>
      {intro && (
        <Text size="sm" c="dimmed">
          {intro}
        </Text>
      )}
      {error ? <ErrorMessage error={error} /> : null}
      {content}
    </Stack>
  )
}

export interface Column<T> {
  header: ReactNode
  cell: (row: T) => ReactNode
  style?: CSSProperties
}

/**
 * A table of items, a row each, with the row's buttons last (under a heading only screen readers read), or the `empty`
 * text when there is none.
 */
export function RowTable<T>({
  rows,
  rowKey,
  columns,
  actions,
  actionsLabel = 'Actions',
  empty,
  striped = true,
  highlightOnHover,
  label,
}: {
  rows: T[]
  rowKey: (row: T) => string | number
  columns: Column<T>[]
  actions?: (row: T) => ReactNode
  actionsLabel?: string
  empty: ReactNode
  striped?: boolean
  highlightOnHover?: boolean
  /** The table's name, for a page with more than one. */
  label?: string
}) {
  if (rows.length === 0) return <Text c="dimmed">{empty}</Text>
  return (
    <Table striped={striped} highlightOnHover={highlightOnHover} aria-label={label}>
      <Table.Thead>
        <Table.Tr>
          {columns.map((c, i) => (
            <Table.Th key={i}>{c.header}</Table.Th>
          ))}
          {actions && (
            <Table.Th>
              <VisuallyHidden>{actionsLabel}</VisuallyHidden>
            </Table.Th>
          )}
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((row) => (
          <Table.Tr key={rowKey(row)}>
            {columns.map((c, i) => (
              <Table.Td key={i} style={c.style}>
                {c.cell(row)}
              </Table.Td>
            ))}
            {actions && (
              <Table.Td>
                <Group gap="xs" justify="end" wrap="nowrap">
                  {actions(row)}
                </Group>
              </Table.Td>
            )}
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  )
}

/** A name with its description, small and dimmed, under it. */
export function Described({ name, description }: { name: ReactNode; description?: string | null }) {
  return (
    <>
      <Text size="sm">{name}</Text>
      {description && (
        <Text size="xs" c="dimmed">
          {description}
        </Text>
      )}
    </>
  )
}

/** A row's button, named for its row (`label`) for those who do not see the row. */
export function RowButton({ label, onClick, disabled, children }: { label: string; onClick: () => void; disabled?: boolean; children: ReactNode }) {
  return (
    <Button size="xs" variant="default" onClick={onClick} disabled={disabled} aria-label={label}>
      {children}
    </Button>
  )
}

/** A row's delete button: the browser asks `confirm` first, and only a yes deletes. */
export function DeleteButton({ label, confirm, onDelete, children = 'Delete' }: { label: string; confirm: string; onDelete: () => void; children?: ReactNode }) {
  return (
    <Button size="xs" color="red.9" variant="outline" onClick={() => window.confirm(confirm) && onDelete()} aria-label={label}>
      {children}
    </Button>
  )
}

/** The dialog that creates an item (while `editing` is 'new') or edits one; closed while `editing` is undefined. */
export function EditDialog<T>({
  editing,
  onClose,
  title,
  size,
  children,
}: {
  editing: T | 'new' | undefined
  onClose: () => void
  title: (item: T | undefined) => string
  size?: string
  children: (item: T | undefined) => ReactNode
}) {
  const item = editing === 'new' ? undefined : editing
  return (
    <Dialog opened={editing !== undefined} onClose={onClose} title={title(item)} size={size}>
      {editing !== undefined && children(item)}
    </Dialog>
  )
}

/** A form that runs one write: its error above the fields, the submit button (busy while the write runs) below them. */
export function MutationForm({
  mutation,
  submit,
  disabled,
  children,
}: {
  mutation: { mutate: (variables: void) => void; isPending: boolean; error: unknown }
  submit: ReactNode
  /** The submit button is disabled (while what is typed cannot be sent). */
  disabled?: boolean
  children: ReactNode
}) {
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        mutation.mutate()
      }}
    >
      <Stack>
        {mutation.error ? <ErrorMessage error={mutation.error} /> : null}
        {children}
        <Button type="submit" loading={mutation.isPending} disabled={disabled}>
          {submit}
        </Button>
      </Stack>
    </form>
  )
}

/** A form of a few fields in a row with its submit button at their end (its error is shown by its section). */
export function InlineForm({ mutation, submit, children }: { mutation: { mutate: (variables: void) => void; isPending: boolean }; submit: ReactNode; children: ReactNode }) {
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        mutation.mutate()
      }}
    >
      <Group align="end">
        {children}
        <Button type="submit" loading={mutation.isPending}>
          {submit}
        </Button>
      </Group>
    </form>
  )
}
