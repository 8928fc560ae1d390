import { useEffect, useRef, useState } from 'react'
import { Alert, Button, FileInput, Group, List, Select, Stack, Stepper, Text, Textarea } from '@mantine/core'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, ApiError, ok, type Schemas } from '../api/client'
import { useChange } from '../api/use-change'
import { projectKey } from '../api/projects'
import { ErrorMessage } from './error-message'

type ImportData = Schemas['importTogglesSchema']['data']
type Validation = Schemas['importTogglesValidateSchema']
type Item = Schemas['importTogglesValidateItemSchema']

/** What the import was validated for: the import is made with exactly this. */
interface Checked {
  environment: string
  data: ImportData
  validation: Validation
}

/** The text as an import's `data`, or why it cannot be one (the server checks the rest). */
function parseExport(text: string): { data: ImportData } | { problem: string } {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return { problem: `This is not JSON: ${error instanceof Error ? error.message : String(error)}` }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { problem: 'This is not an export: an export is a JSON object with features, featureStrategies and tagTypes.' }
  return { data: parsed as ImportData }
}

const flags = (n: number) => (n === 1 ? '1 flag' : `${n} flags`)

/** What the import will do to the flags it names, from validate's warnings (its messages are Unleash's, which carry no counts). */
function outcome(checked: Checked) {
  // A malformed document (validate lists its problems as errors) may have no list of flags.
  const features = Array.isArray(checked.data.features) ? checked.data.features.filter((f) => f !== null && typeof f === 'object') : []
  const named = [...new Set(features.map((f) => f.name))]
  const affected = (start: string) => new Set(checked.validation.warnings.find((w) => w.message.startsWith(start))?.affectedItems ?? [])
  const archived = affected('The following features will not be imported as they are currently archived')
  const overwritten = affected('The following features already exist in this project')
  const updated = named.filter((n) => overwritten.has(n)).length
  const left = named.filter((n) => archived.has(n)).length
  // A new flag the file says archived is created archived.
  const createdArchived = named.filter((n) => !overwritten.has(n) && !archived.has(n) && features.some((f) => f.name === n && f.archived === true)).length
  return { imported: named.length - left, created: named.length - left - updated, updated, left, createdArchived }
}

function outcomeText(projectId: string, checked: Checked) {
  const { imported, created, updated, left, createdArchived } = outcome(checked)
  const parts = [`${created} created${createdArchived > 0 ? ` (${createdArchived} archived)` : ''}`, `${updated} updated`, ...(left > 0 ? [`${left} archived left out`] : [])]
  return `Imported ${flags(imported)} into ${projectId} in ${checked.environment}: ${parts.join(', ')}`
}

/**
 * Imports an export into the project (Unleash's features-batch): choose the environment, paste the JSON or pick the
 * file, then `POST /api/admin/features-batch/validate` reports what the import would meet; `…/import` is offered only
 * when it reports no error and no missing permission, with exactly what was validated.
 */
export default function ImportFlagsForm({ projectId, environments, onDone }: { projectId: string; environments: string[]; onDone: () => void }) {
  const queryClient = useQueryClient()
  const [environment, setEnvironment] = useState<string | null>(environments[0] ?? null)
  const [file, setFile] = useState<File | null>(null)
  const [text, setText] = useState('')
  const [problem, setProblem] = useState<string>()
  const [checked, setChecked] = useState<Checked>()

  const validate = useMutation({
    mutationFn: async ({ environment, data }: { environment: string; data: ImportData }) => ({
      environment,
      data,
      validation: await ok(api.POST('/api/admin/features-batch/validate', { body: { project: projectId, environment, data } })),
    }),
    onSuccess: setChecked,
  })
  const importing = useChange(
    (checked: Checked) => ok(api.POST('/api/admin/features-batch/import', { body: { project: projectId, environment: checked.environment, data: checked.data } })),
    () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: projectKey(projectId) }),
        queryClient.invalidateQueries({ queryKey: ['flag', projectId] }),
        queryClient.invalidateQueries({ queryKey: ['projects'] }),
      ]),
    (checked) => outcomeText(projectId, checked),
  )

  async function pick(picked: File | null) {
    setFile(picked)
    setProblem(undefined)
    if (!picked) return
    try {
      setText(await picked.text())
    } catch (error) {
      setProblem(`The file ${picked.name} could not be read: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  function submit() {
    validate.reset()
    if (!environment) return
    const parsed = parseExport(text)
    if ('problem' in parsed) return setProblem(parsed.problem)
    setProblem(undefined)
    validate.mutate({ environment, data: parsed.data })
  }

  function back() {
    setChecked(undefined)
    importing.reset()
  }

  return (
    <Stepper active={checked ? 1 : 0} onStepClick={(step) => step === 0 && back()} allowNextStepsSelect={false} size="sm">
      <Stepper.Step label="Choose the data" description="Environment and export">
        <form
          onSubmit={(e) => {
            e.preventDefault()
            submit()
          }}
        >
          <Stack>
            <Select
              label="Environment"
              description="The flags' strategies, switch and variants are set in this environment"
              data={environments}
              value={environment}
              onChange={setEnvironment}
              allowDeselect={false}
              required
            />
            <FileInput label="Export file" description="A JSON file exported from Flagpost or Unleash" placeholder="Choose a file" accept="application/json,.json" value={file} onChange={(f) => void pick(f)} clearable clearButtonProps={{ 'aria-label': 'Clear the file' }} />
            <Textarea
              label="Export data"
              description="Or paste the export's JSON here"
              value={text}
              onChange={(e) => {
                setText(e.currentTarget.value)
                setProblem(undefined)
              }}
              autosize
              minRows={6}
              maxRows={14}
              spellCheck={false}
              autoComplete="off"
              styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
              aria-invalid={problem !== undefined}
            />
            {problem && (
              <Alert color="red" title="The data cannot be imported" role="alert" variant="light">
                {problem}
              </Alert>
            )}
            {validate.isError && <ErrorMessage error={validate.error} title={validate.error instanceof ApiError && validate.error.status === 400 ? 'This is not an export the server can import' : undefined} />}
            <Group justify="end">
              <Button type="submit" disabled={!environment || text.trim() === ''} loading={validate.isPending}>
                Validate
              </Button>
            </Group>
          </Stack>
        </form>
      </Stepper.Step>
      <Stepper.Step label="Validate and import" description="What the import would do">
        {checked && (
          <Stack>
            <Report projectId={projectId} checked={checked} />
            {importing.isError && <ErrorMessage error={importing.error} />}
            <Group justify="space-between">
              <Button variant="default" onClick={back}>
                Back
              </Button>
              <Button
                disabled={checked.validation.errors.length > 0 || checked.validation.permissions.length > 0}
                loading={importing.isPending}
                onClick={() => importing.mutate(checked, { onSuccess: onDone })}
              >
                Import
              </Button>
            </Group>
          </Stack>
        )}
      </Stepper.Step>
    </Stepper>
  )
}

/** Validate's answer as lists: errors and missing permissions (each stops the import), then warnings. */
function Report({ projectId, checked }: { projectId: string; checked: Checked }) {
  const { errors, warnings, permissions } = checked.validation
  const { imported, created, updated, left } = outcome(checked)
  const summary = useRef<HTMLParagraphElement>(null)
  // The Validate button is gone: the report takes the focus, so keyboard and screen-reader users land on it.
  useEffect(() => summary.current?.focus(), [])
  const blocked = errors.length > 0 || permissions.length > 0
  return (
    <Stack gap="sm">
      <Text ref={summary} tabIndex={-1} fw={600}>
        {blocked
          ? `The import into ${projectId} in ${checked.environment} cannot be made as it is.`
          : `Ready to import ${flags(imported)} into ${projectId} in ${checked.environment}: ${created} to create, ${updated} to update${left > 0 ? `, ${left} archived left out` : ''}.`}
      </Text>
      {errors.length > 0 && <Items title="Errors" color="red" items={errors} />}
      {permissions.length > 0 && <Items title="Permissions you lack" color="red" items={permissions} />}
      {warnings.length > 0 && <Items title="Warnings" color="orange.9" items={warnings} />}
      {!blocked && warnings.length === 0 && <Text size="sm">Validation found no errors, warnings or missing permissions.</Text>}
    </Stack>
  )
}

function Items({ title, color, items }: { title: string; color: string; items: Item[] }) {
  return (
    <Alert color={color} title={title} variant="light" role={color === 'red' ? 'alert' : 'status'}>
      <List size="sm" spacing={4}>
        {items.map((item) => (
          <List.Item key={item.message}>
            {item.message}
            {item.affectedItems.length > 0 && (
              <List size="sm" withPadding listStyleType="disc">
                {item.affectedItems.map((affected) => (
                  <List.Item key={affected}>{affected}</List.Item>
                ))}
              </List>
            )}
          </List.Item>
        ))}
      </List>
    </Alert>
  )
}
