import { useState, type FormEvent } from 'react'
import { Alert, Button, Center, Loader, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { Link, useLocation, useSearch } from 'wouter'
import { api, ok, SIGN_IN_PATH } from '../api/client'
import { ME_KEY } from '../api/session'
import { PasswordSignInOff, passwordSignInOff } from '../components/password-sign-in-off'

/** The page an invite link opens (`/sign-up?invite=<secret>`): checks the link, then makes the account and signs it in. */
export default function SignUpPage() {
  const invite = new URLSearchParams(useSearch()).get('invite') ?? ''
  const valid = useQuery({
    queryKey: ['invite-link', invite],
    queryFn: () => ok(api.GET('/invite/{token}/validate', { params: { path: { token: invite } } })).then(() => true),
    enabled: invite !== '',
    retry: false,
  })
  return (
    <Center mih="100vh" component="main">
      <Paper withBorder p="xl" w={420} radius="md">
        <Stack>
          <Title order={1} size="h2">
            Join Flagpost
          </Title>
          {passwordSignInOff(valid.error) ? (
            <PasswordSignInOff error={valid.error} />
          ) : invite === '' || valid.isError ? (
            <>
              <Alert color="red" title="This invite link does not work" role="alert">
                {valid.error?.message ?? 'The link has no invite in it.'} Ask whoever sent it for a new one.
              </Alert>
              <Text size="sm">
                Already have an account? <Link href={SIGN_IN_PATH}>Sign in</Link>
              </Text>
            </>
          ) : valid.isPending ? (
            <Center>
              <Loader aria-label="Checking the invite link" />
            </Center>
          ) : (
            <SignUpForm invite={invite} />
          )}
        </Stack>
      </Paper>
    </Center>
  )
}

function SignUpForm({ invite }: { invite: string }) {
  const [name, setName] = useState('')
  const [email, setEmail] = useState('')
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [confirm, setConfirm] = useState('')
  const [failure, setFailure] = useState<string>()
  const [busy, setBusy] = useState(false)
  const [, setLocation] = useLocation()
  const queryClient = useQueryClient()

  async function submit(event: FormEvent) {
    event.preventDefault()
    if (password !== confirm) return setFailure('The two passwords differ.')
    setBusy(true)
    setFailure(undefined)
    try {
      await ok(api.POST('/invite/{token}/signup', { params: { path: { token: invite } }, body: { name, email, password, ...(username.trim() ? { username: username.trim() } : {}) } }))
      await queryClient.invalidateQueries({ queryKey: ME_KEY })
      setLocation('/')
    } catch (error) {
      setFailure(error instanceof Error ? error.message : String(error))
    } finally {
      setBusy(false)
    }
  }

  return (
    <form onSubmit={(e) => void submit(e)}>
      <Stack>
        <Text size="sm">You were invited to Flagpost. Create your account to sign in.</Text>
        {failure && (
          <Alert color="red" title="Could not create the account" role="alert">
            {failure}
          </Alert>
        )}
        <TextInput label="Name" autoComplete="name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <TextInput label="E-mail" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
        <TextInput label="Username" description="Optional" autoComplete="username" value={username} onChange={(e) => setUsername(e.currentTarget.value)} />
        <PasswordInput label="Password" description="At least 8 characters" autoComplete="new-password" required value={password} onChange={(e) => setPassword(e.currentTarget.value)} />
        <PasswordInput label="Password again" autoComplete="new-password" required value={confirm} onChange={(e) => setConfirm(e.currentTarget.value)} />
        <Button type="submit" loading={busy}>
          Create account
        </Button>
      </Stack>
    </form>
  )
}
