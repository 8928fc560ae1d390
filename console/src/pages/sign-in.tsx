import { useEffect, useState, type FormEvent } from 'react'
import { Alert, Button, Center, Divider, Paper, PasswordInput, Stack, TextInput, Title } from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useLocation, useSearch } from 'wouter'
import { api, ApiError, ok } from '../api/client'
import { ME_KEY } from '../api/session'
import { localPath } from '../../../src/core/local-path'

/** Only a path of this console may be where a sign-in leads (never another site): the server's own check. */
const nextPath = (search: string): string => localPath(new URLSearchParams(search).get('next'), window.location.origin)

/** How this instance lets browsers sign in: the admin API's 401 says it (Unleash's `options` and `defaultHidden`). */
interface SignInOptions {
  defaultHidden?: boolean
  options?: { type: string; message: string; path: string }[]
}

// A plain fetch: a 401 here is the answer, not a reason to go to the sign-in page (api/client.ts does that).
async function fetchSignInOptions(): Promise<SignInOptions> {
  const response = await fetch('/api/admin/user', { credentials: 'same-origin', headers: { accept: 'application/json' } })
  return response.status === 401 ? ((await response.json()) as SignInOptions) : {}
}


/**
 * Why single sign-on just failed: the reason the server left in a cookie only it sets, never the URL's `errorMsg`, so a
 * link cannot put its own words on this page.
 */
function ssoRefusal(): string | undefined {
  const found = document.cookie.split('; ').find((c) => c.startsWith(`${SSO_ERROR_COOKIE}=`))
  if (found === undefined) return undefined
  try {
    return decodeURIComponent(found.slice(SSO_ERROR_COOKIE.length + 1))
  } catch {
    return undefined
  }
}
const SSO_ERROR_COOKIE = 'flagpost-sso-error'

export default function SignInPage() {
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [failure, setFailure] = useState<{ title: string; message: string }>()
  const [busy, setBusy] = useState(false)
  const [, setLocation] = useLocation()
  const search = useSearch()
  const queryClient = useQueryClient()
  const ways = useQuery({ queryKey: ['sign-in-options'], queryFn: fetchSignInOptions, staleTime: 0 })
  const [refused] = useState(ssoRefusal)
  // Shown once: a reload of the page no longer says it.
  useEffect(() => void (document.cookie = `${SSO_ERROR_COOKIE}=; Path=/sign-in; Max-Age=0`), [])
  const passwordHidden = ways.data?.defaultHidden === true
  const singleSignOn = ways.data?.options ?? []

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
            {!failure && refused && (
              <Alert color="red" title="Single sign-on failed" role="alert">
                {refused}
              </Alert>
            )}
            {singleSignOn.map((o) => (
              <Button key={o.type} component="a" variant="default" href={`${o.path}?redirect=${encodeURIComponent(nextPath(search))}`}>
                {o.message}
              </Button>
            ))}
            {!passwordHidden && singleSignOn.length > 0 && <Divider label="or with a password" labelPosition="center" />}
            {!passwordHidden && (
              <>
                <TextInput label="Username or e-mail" autoComplete="username" required value={username} onChange={(e) => setUsername(e.currentTarget.value)} />
                <PasswordInput label="Password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.currentTarget.value)} />
                <Button type="submit" loading={busy}>
                  Sign in
                </Button>
              </>
            )}
          </Stack>
        </form>
      </Paper>
    </Center>
  )
}
