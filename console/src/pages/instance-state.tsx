import { useState } from 'react'
import { Alert, Button, Checkbox, FileInput, Group, List, PasswordInput, SegmentedControl, Stack, Switch, Table, Text, TextInput, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { Dialog } from '../components/dialog'
import { ErrorMessage, PageError } from '../components/error-message'

type Result = Schemas['stateImportResultSchema']
type Kind = keyof Result['imported']

/** The parts of a backup, as the export's switches name them and as the page says them. */
const PARTS = [
  { query: 'featureToggles', label: 'Flags, with their environments, strategies, tags and dependencies' },
  { query: 'projects', label: 'Projects, with their environments' },
  { query: 'environments', label: 'Environments' },
  { query: 'segments', label: 'Segments' },
  { query: 'strategies', label: 'Custom strategy types' },
  { query: 'contextFields', label: 'Context fields' },
  { query: 'tags', label: 'Tag types and tags' },
] as const
type Part = (typeof PARTS)[number]['query']

const KINDS: { kind: Kind; label: string }[] = [
  { kind: 'environments', label: 'Environments' },
  { kind: 'projects', label: 'Projects' },
  { kind: 'strategies', label: 'Strategy types' },
  { kind: 'contextFields', label: 'Context fields' },
  { kind: 'tagTypes', label: 'Tag types' },
  { kind: 'tags', label: 'Tags' },
  { kind: 'segments', label: 'Segments' },
  { kind: 'features', label: 'Flags' },
  { kind: 'featureTags', label: 'Flag tags' },
]

/** Backup and restore: the instance state export as a file, and a restore from one (Unleash's state import). Admins only. */
export default function InstanceStatePage() {
  const allows = useAllows()
  if (!allows('ADMIN')) return <PageError title="Backup and restore" error={new Error('Only admins may back up and restore the instance.')} />
  return (
    <Stack maw={760}>
      <Title order={1}>Backup and restore</Title>
      <Text c="dimmed">
        The whole configuration as one file: flags and what they hold, projects, environments, segments, strategy types, context fields and tags. No secret is in it: API tokens, users,
        project members, integrations and settings are neither backed up nor restored.
      </Text>
      <Download />
      <Restore />
      <MigrateFromUnleash />
    </Stack>
  )
}

function Download() {
  const [parts, setParts] = useState<Record<Part, boolean>>(() => Object.fromEntries(PARTS.map((p) => [p.query, true])) as Record<Part, boolean>)
  const query = new URLSearchParams({ download: 'true', ...Object.fromEntries(PARTS.map((p) => [p.query, String(parts[p.query])])) })
  return (
    <Stack component="section" aria-labelledby="backup-heading" gap="sm">
      <Title order={2} size="h3" id="backup-heading">
        Download a backup
      </Title>
      <Checkbox.Group label="What the backup holds" value={PARTS.filter((p) => parts[p.query]).map((p) => p.query)} onChange={(v) => setParts(Object.fromEntries(PARTS.map((p) => [p.query, v.includes(p.query)])) as Record<Part, boolean>)}>
        <Stack gap={6} mt={6}>
          {PARTS.map((p) => (
            <Checkbox key={p.query} value={p.query} label={p.label} />
          ))}
        </Stack>
      </Checkbox.Group>
      <Group>
        {/* The server answers the file as an attachment: the browser downloads it with the session cookie. */}
        <Button component="a" href={`/api/admin/state/export?${query}`} download>
          Download backup
        </Button>
      </Group>
    </Stack>
  )
}

function Restore() {
  const queryClient = useQueryClient()
  const [file, setFile] = useState<File | null>(null)
  const [keep, setKeep] = useState(true)
  const [drop, setDrop] = useState(false)
  const [confirming, setConfirming] = useState<{ document: unknown; kinds: string[] }>()
  const restore = useMutation({
    mutationFn: (document: unknown) =>
      ok(api.POST('/api/admin/state/import', { params: { query: { keep: keep ? 'true' : 'false', drop: drop ? 'true' : 'false' } }, body: document as Schemas['stateImportSchema'] })),
    onSuccess: async (result) => {
      setConfirming(undefined)
      // Anything the console shows may have changed.
      await queryClient.invalidateQueries()
      notifications.show({ message: `Backup restored: ${result.events} ${result.events === 1 ? 'change' : 'changes'} recorded`, color: 'green' })
    },
    onError: () => setConfirming(undefined),
  })
  const [unreadable, setUnreadable] = useState<string>()

  async function start() {
    if (!file) return
    restore.reset()
    setUnreadable(undefined)
    let document: unknown
    try {
      document = JSON.parse(await file.text())
    } catch {
      setUnreadable(`${file.name} is not a JSON document: choose a backup downloaded here (or an Unleash state export).`)
      return
    }
    if (!drop) return restore.mutate(document)
    const present = typeof document === 'object' && document !== null ? Object.keys(document) : []
    setConfirming({ document, kinds: KINDS.filter((k) => present.includes(k.kind)).map((k) => k.label.toLowerCase()) })
  }

  return (
    <Stack component="section" aria-labelledby="restore-heading" gap="sm">
      <Title order={2} size="h3" id="restore-heading">
        Restore from a backup
      </Title>
      <FileInput label="Backup file" description="A backup downloaded here, or an Unleash 4 or 5 state export (JSON)" accept="application/json,.json" value={file} onChange={setFile} clearable clearButtonProps={{ 'aria-label': 'Clear the chosen file' }} />
      <Switch label="Keep existing objects" description="Leave what already exists as it is; off: the backup's version replaces it" checked={keep} onChange={(e) => setKeep(e.currentTarget.checked)} />
      <Switch
        label="Drop what the backup does not list"
        description="Of every kind the backup holds, delete what it does not list first (never the default project, built-in strategy types, environments and projects API tokens use, or what is still in use)"
        checked={drop}
        onChange={(e) => setDrop(e.currentTarget.checked)}
      />
      {unreadable && <ErrorMessage error={new Error(unreadable)} title="Not a backup" />}
      {restore.isError && <ErrorMessage error={restore.error} />}
      <Group>
        <Button color={drop ? 'red.9' : undefined} disabled={!file} loading={restore.isPending && !confirming} onClick={() => void start()}>
          Restore
        </Button>
      </Group>
      {restore.data && <Outcome result={restore.data} />}
      <Dialog opened={confirming !== undefined} onClose={() => setConfirming(undefined)} title="Drop and restore?">
        {confirming && (
          <Stack>
            <Alert color="red" variant="light" title="This deletes for good">
              Of these kinds, everything the backup does not list is deleted before it is restored:
              <List mt="xs" size="sm">
                {confirming.kinds.map((k) => (
                  <List.Item key={k}>{k}</List.Item>
                ))}
              </List>
            </Alert>
            <Group justify="end">
              <Button variant="default" onClick={() => setConfirming(undefined)}>
                Cancel
              </Button>
              <Button color="red.9" loading={restore.isPending} onClick={() => restore.mutate(confirming.document)}>
                Drop and restore
              </Button>
            </Group>
          </Stack>
        )}
      </Dialog>
    </Stack>
  )
}

/** What a restore did, by kind. */
function Outcome({ result }: { result: Result }) {
  return (
    <Stack gap="xs">
      <Title order={3} size="h4">
        Restored
      </Title>
      <Table striped aria-label="What the restore did">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Kind</Table.Th>
            <Table.Th>Imported</Table.Th>
            <Table.Th>Unchanged</Table.Th>
            <Table.Th>Dropped</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {KINDS.map(({ kind, label }) => (
            <Table.Tr key={kind}>
              <Table.Td>{label}</Table.Td>
              <Table.Td>{result.imported[kind]}</Table.Td>
              <Table.Td>{result.unchanged[kind]}</Table.Td>
              <Table.Td>{result.dropped[kind]}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  )
}

type Migration = Schemas['migrateFromUnleashResultSchema']

/** The plan's counts in words: one, and more than one. */
const COUNTED: Record<string, [string, string]> = {
  projects: ['project', 'projects'],
  environments: ['environment', 'environments'],
  contextFields: ['context field', 'context fields'],
  strategies: ['strategy type', 'strategy types'],
  tagTypes: ['tag type', 'tag types'],
  tags: ['tag', 'tags'],
  segments: ['segment', 'segments'],
  features: ['flag', 'flags'],
  featureStrategies: ['flag strategy', 'flag strategies'],
  featureTags: ['flag tag', 'flag tags'],
  featureDependencies: ['dependency', 'dependencies'],
  apiTokens: ['API token', 'API tokens'],
}
const counted = (kind: string, n: number) => `${n} ${COUNTED[kind]?.[n === 1 ? 0 : 1] ?? kind}`

/** Moving from a running Unleash 8.2: its URL and an admin token, the plan of a dry run, then the migration (POST /api/admin/migrate/unleash). */
function MigrateFromUnleash() {
  const queryClient = useQueryClient()
  const [url, setUrl] = useState('')
  const [token, setToken] = useState('')
  const [onConflict, setOnConflict] = useState<'fail' | 'skip'>('fail')
  const [plan, setPlan] = useState<Migration['plan']>()
  const run = useMutation({
    mutationFn: (dryRun: boolean) => ok(api.POST('/api/admin/migrate/unleash', { body: { url, token, dryRun, onConflict } })),
    onSuccess: async (answer) => {
      setPlan(answer.plan)
      if (!answer.result) return
      setToken('')
      await queryClient.invalidateQueries()
      notifications.show({ message: `Migrated from Unleash: ${answer.result.events} ${answer.result.events === 1 ? 'change' : 'changes'} recorded`, color: 'green' })
    },
  })
  const done = run.data?.result !== undefined
  return (
    <Stack component="section" aria-labelledby="migrate-heading" gap="sm">
      <Title order={2} size="h3" id="migrate-heading">
        Migrate from Unleash
      </Title>
      <Text c="dimmed" size="sm">
        Reads a running Unleash 8.2 through its admin API and writes projects, environments, context fields, strategy types, tags, segments and every flag here, in one step. The token is sent to that
        Unleash only and kept nowhere.
      </Text>
      <TextInput label="Unleash URL" placeholder="https://unleash.example.com" value={url} onChange={(e) => { setUrl(e.currentTarget.value); setPlan(undefined) }} />
      <PasswordInput label="Admin API token of that Unleash" value={token} onChange={(e) => { setToken(e.currentTarget.value); setPlan(undefined) }} autoComplete="off" />
      <SegmentedControl
        aria-label="Flags that already exist here"
        value={onConflict}
        onChange={(v) => { setOnConflict(v as 'fail' | 'skip'); setPlan(undefined) }}
        data={[
          { value: 'fail', label: 'Stop if a flag exists here' },
          { value: 'skip', label: 'Leave existing flags as they are' },
        ]}
      />
      {run.isError && <ErrorMessage error={run.error} />}
      {plan && (
        <Alert title={done ? 'Migrated' : 'Plan (nothing written yet)'} color={done ? 'green' : 'blue'}>
          <Text size="sm">{Object.entries(plan.counts).map(([kind, n]) => counted(kind, n)).join(' · ')}</Text>
          {plan.conflicts.names.length > 0 && <Text size="sm">Flags already here: {plan.conflicts.names.join(', ')}</Text>}
          <Text size="sm" fw={600} mt="xs">
            Not carried
          </Text>
          <List size="sm">
            {plan.notCarried.map((line) => (
              <List.Item key={line}>{line}</List.Item>
            ))}
          </List>
        </Alert>
      )}
      <Group>
        <Button variant="default" disabled={!url || !token} loading={run.isPending && run.variables === true} onClick={() => run.mutate(true)}>
          Show the plan
        </Button>
        <Button disabled={!plan || done || !token} loading={run.isPending && run.variables === false} onClick={() => run.mutate(false)}>
          Migrate
        </Button>
      </Group>
    </Stack>
  )
}
