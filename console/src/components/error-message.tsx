import { Alert, Stack, Title } from '@mantine/core'
import { ApiError } from '../api/client'

const TITLES: Record<number, string> = {
  400: 'The server refused the input',
  403: 'You may not do this',
  404: 'Not found',
  409: 'Conflict',
  413: 'Too large',
  429: 'Too many attempts',
}

/** An error as the user reads it: the API's `message`, under a title saying what kind of refusal it was. */
export function ErrorMessage({ error, title }: { error: unknown; title?: string }) {
  const heading = title ?? (error instanceof ApiError ? (TITLES[error.status] ?? `Error ${error.status}`) : 'Something went wrong')
  const message = error instanceof Error ? error.message : String(error)
  return (
    <Alert color="red" title={heading} role="alert" variant="light">
      {message}
    </Alert>
  )
}

/** A page that could not load: its heading (every page has one), then the error. */
export function PageError({ title, error }: { title: string; error: unknown }) {
  return (
    <Stack>
      <Title order={1}>{title}</Title>
      <ErrorMessage error={error} />
    </Stack>
  )
}
