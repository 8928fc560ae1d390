import { useState, type FormEvent } from 'react'
import { Alert, Button, Center, Paper, PasswordInput, Stack, TextInput, Title } from '@mantine/core'
import { useQueryClient } from '@tanstack/react-query'
import { useLocation, useSearch } from 'wouter'
import { api, ApiError, ok } from '../api/client'
import { ME_KEY } from '../api/session'

/** Only a path of this console may be where a sign-in leads (never another site). */
function nextPath(search: string): string {
  const next = new URLSearchParams(search).get('next')
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/'
}

export default function SignInPage() {
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [failure, setFailure] = useState<{ title: string; message: string }>()
  const [busy, setBusy] = useState(false)
  const [, setLocation] = useLocation()
  const search = useSearch()
  const queryClient = useQueryClient()

  async function submit(event: FormEvent) {
    event.preventDefault()
    setBusy(true)
    setFailure(undefined)
    try {
      await ok(api.POST('/auth/simple/login', { body: { username, password } }))
      await queryClient.invalidateQueries({ queryKey: ME_KEY })
      setLocation(nextPath(search))
    } catch (error) {
      const status = error instanceof ApiError ? error.status : 0
      const title = status === 401 ? 'Sign-in failed' : status === 429 ? 'Too many attempts' : 'Could not sign in'
      setFailure({ title, message: error instanceof Error ? error.message : String(error) })
    } finally {
      setBusy(false)
    }
  }

  return (
    <Center mih="100vh" component="main">
      <Paper withBorder p="xl" w={380} radius="md">
        <form onSubmit={(e) => void submit(e)}>
          <Stack>
            <Title order={1} size="h2">
              Sign in to Flagpost
            </Title>
            {!failure && new URLSearchParams(search).get('changed') === '1' && (
              <Alert color="blue" title="Password changed" role="status">
                Sign in with your new password.
              </Alert>
            )}
            {failure && (
              <Alert color="red" title={failure.title} role="alert">
                {failure.message}
              </Alert>
            )}
            <TextInput label="Username or e-mail" autoComplete="username" required value={username} onChange={(e) => setUsername(e.currentTarget.value)} />
            <PasswordInput label="Password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.currentTarget.value)} />
            <Button type="submit" loading={busy}>
              Sign in
            </Button>
          </Stack>
        </form>
      </Paper>
    </Center>
  )
}
