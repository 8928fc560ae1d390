import { useState, type FormEvent } from 'react'
import { Alert, Button, Center, Loader, Paper, PasswordInput, Stack, Text, Title } from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useLocation, useSearch } from 'wouter'
import { api, ApiError, ok, SIGN_IN_PATH } from '../api/client'
import { ME_KEY } from '../api/session'
import { PasswordSignInOff, passwordSignInOff } from '../components/password-sign-in-off'

const INVALID = 'This link is invalid, was already used or has expired. Ask an admin for a new one.'

/**
 * Where an invite or password-reset link leads (`/new-user?token=…`, the address the server's links name): the link is
 * checked (`GET /auth/reset/validate`), the user sets a password (`POST /auth/reset/password`; the server's rules are
 * shown when it refuses one), and is signed in with it, or sent to the sign-in page if that fails.
 */
export default function NewUserPage() {
  const token = new URLSearchParams(useSearch()).get('token') ?? ''
  const link = useQuery({
    queryKey: ['invite-link', token],
    queryFn: () => ok(api.GET('/auth/reset/validate', { params: { query: { token } } })),
    enabled: token !== '',
    retry: false,
    gcTime: 0,
  })
  const [password, setPassword] = useState('')
  const [again, setAgain] = useState('')
  const [problem, setProblem] = useState<{ title: string; message: string }>()
  const [busy, setBusy] = useState(false)
  const [, setLocation] = useLocation()
  const queryClient = useQueryClient()

  async function submit(event: FormEvent) {
    event.preventDefault()
    if (!link.data) return
    if (password !== again) return setProblem({ title: 'Check your password', message: 'The two passwords differ.' })
    setBusy(true)
    setProblem(undefined)
    try {
      await ok(api.POST('/auth/reset/password', { body: { token, password } }))
    } catch (error) {
      setBusy(false)
      const refused = error instanceof ApiError && error.status === 400
      return setProblem({ title: refused ? 'The server refused this password' : 'The password was not set', message: error instanceof ApiError && error.status === 401 ? INVALID : error instanceof Error ? error.message : String(error) })
    }
    // The link is used up: it leaves the address bar (and the history entry) as the user moves on.
    try {
      await ok(api.POST('/auth/simple/login', { body: { username: link.data.username || link.data.email, password } }))
      await queryClient.invalidateQueries({ queryKey: ME_KEY })
      setLocation('/', { replace: true })
    } catch {
      setLocation(`${SIGN_IN_PATH}?changed=1`, { replace: true })
    }
  }

  const who = link.data && (link.data.name || link.data.username || link.data.email)
  return (
    <Center mih="100vh" component="main">
      <Paper withBorder p="xl" w={400} radius="md">
        <Stack>
          <Title order={1} size="h2">
            Welcome to Flagpost
          </Title>
          {passwordSignInOff(link.error) ? (
            <PasswordSignInOff error={link.error} />
          ) : token === '' || link.isError ? (
            <Alert color="red" title="This link does not work" role="alert">
              {token === '' || (link.error instanceof ApiError && link.error.status === 401) ? INVALID : link.error?.message}
            </Alert>
          ) : link.isPending ? (
            <Center>
              <Loader role="status" aria-label="Checking your link" />
            </Center>
          ) : (
            <form onSubmit={(e) => void submit(e)}>
              <Stack>
                <Text>Set a password for {who ? <strong>{who}</strong> : 'your account'}, then you are signed in.</Text>
                {problem && (
                  <Alert color="red" title={problem.title} role="alert">
                    {problem.message}
                  </Alert>
                )}
                <PasswordInput label="New password" autoComplete="new-password" required value={password} onChange={(e) => setPassword(e.currentTarget.value)} />
                <PasswordInput label="New password again" autoComplete="new-password" required value={again} onChange={(e) => setAgain(e.currentTarget.value)} />
                <Button type="submit" loading={busy}>
                  Set password and sign in
                </Button>
              </Stack>
            </form>
          )}
        </Stack>
      </Paper>
    </Center>
  )
}
