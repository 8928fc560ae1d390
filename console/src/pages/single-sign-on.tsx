import { useState } from 'react'
import { Alert, Button, Code, Group, PasswordInput, Select, Stack, Switch, Text, TextInput, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ok, type Schemas } from '../api/client'
import { ErrorMessage, PageError } from '../components/error-message'
import { Loading } from '../components/loading'

type Settings = Schemas['oidcSettingsResponseSchema']
const OIDC_KEY = ['oidc-settings'] as const
const ROOT_ROLES = ['Viewer', 'Editor', 'Admin'] as const
const ALGORITHMS = ['RS256', 'RS384', 'RS512'] as const

/** Single sign-on: the OpenID Connect settings. The secret comes masked and is sent back masked to keep it. Admins only. */
export default function SingleSignOnPage() {
  const settings = useQuery({ queryKey: OIDC_KEY, queryFn: () => ok(api.GET('/api/admin/auth/oidc/settings')) })
  if (settings.isPending) return <Loading />
  if (settings.isError) return <PageError title="Single sign-on" error={settings.error} />
  return (
    <Stack maw={720}>
      <Title order={1}>Single sign-on</Title>
      <Text c="dimmed">Sign-in through an OpenID Connect provider.</Text>
      <Text size="sm">
        Register Flagpost at the provider as a web application whose sign-in redirect URI is <Code>{`${window.location.origin}/auth/oidc/callback`}</Code> (and, for single sign-out, whose
        post-logout redirect URI is <Code>{`${window.location.origin}/sign-in`}</Code>). Once enabled, the sign-in page offers “Sign in with OpenID Connect”.
      </Text>
      {/* Keyed by the stored settings, so a save or reset starts the form again from what the server holds. */}
      <OidcForm key={JSON.stringify(settings.data)} stored={settings.data} />
      <PasswordSignIn oidcEnabled={settings.data.enabled === true} />
    </Stack>
  )
}

function OidcForm({ stored }: { stored: Settings }) {
  const queryClient = useQueryClient()
  const [s, setSettings] = useState<Settings>(stored)
  const set = (patch: Partial<Settings>) => setSettings({ ...s, ...patch })
  const text = (field: 'discoverUrl' | 'clientId' | 'emailDomains' | 'acrValues' | 'groupJsonPath') => ({
    value: s[field] ?? '',
    onChange: (e: { currentTarget: { value: string } }) => set({ [field]: e.currentTarget.value }),
  })
  const save = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/auth/oidc/settings', { body: s })),
    onSuccess: (saved) => {
      queryClient.setQueryData(OIDC_KEY, saved)
      notifications.show({ message: 'Single sign-on settings saved', color: 'green' })
    },
  })
  const reset = useMutation({
    mutationFn: () => ok(api.DELETE('/api/admin/auth/oidc/settings')),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: OIDC_KEY })
      notifications.show({ message: 'Single sign-on settings removed', color: 'green' })
    },
  })
  const error = save.error ?? reset.error
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
    >
      <Stack>
        {error && <ErrorMessage error={error} />}
        <Switch label="Enabled" checked={s.enabled ?? false} onChange={(e) => set({ enabled: e.currentTarget.checked })} />
        <TextInput label="Discover URL" description="The provider's https://…/.well-known/openid-configuration" type="url" {...text('discoverUrl')} />
        <TextInput label="Client id" required={s.enabled} {...text('clientId')} />
        <PasswordInput
          label="Client secret"
          description="Shown masked; leave the mask to keep the stored secret"
          required={s.enabled}
          value={s.secret ?? ''}
          onChange={(e) => set({ secret: e.currentTarget.value })}
          autoComplete="off"
        />
        <Switch label="Create users on first sign-in" checked={s.autoCreate ?? false} onChange={(e) => set({ autoCreate: e.currentTarget.checked })} />
        <Select
          label="Root role of created users"
          data={[...ROOT_ROLES]}
          value={s.defaultRootRole ?? 'Editor'}
          onChange={(v) => v && set({ defaultRootRole: v as (typeof ROOT_ROLES)[number] })}
          allowDeselect={false}
        />
        <TextInput label="E-mail domains" description="Comma-separated, e.g. example.com,example.org; empty for any. Applies to every sign-in, existing users too" {...text('emailDomains')} />
        <Switch
          label="The provider verifies e-mail addresses"
          description="Accept sign-ins whose ID token does not say email_verified. Only for a provider that releases verified addresses alone: otherwise anyone could sign in as an address they do not own"
          checked={s.emailVerifiedByProvider ?? false}
          onChange={(e) => set({ emailVerifiedByProvider: e.currentTarget.checked })}
        />
        <Switch
          label="Single sign-out"
          description="Signing out of Flagpost also signs out of the provider (where it offers that); register the sign-in page below as its post-logout redirect URI"
          checked={s.enableSingleSignOut ?? false}
          onChange={(e) => set({ enableSingleSignOut: e.currentTarget.checked })}
        />
        <TextInput label="ACR values" description="Space-separated" {...text('acrValues')} />
        <Switch
          label="Sync groups"
          description="On each sign-in, the user joins the groups whose SSO group IDs hold one of their groups at the provider, and leaves those group sync made them a member of that no longer do"
          checked={s.enableGroupSyncing ?? false}
          onChange={(e) => set({ enableGroupSyncing: e.currentTarget.checked })}
        />
        <TextInput
          label="Group JSON path"
          description="Where the groups are in the ID token (else UserInfo): a JSONPath such as $.groups, or the claim's name"
          required={s.enableGroupSyncing === true && s.enabled === true}
          disabled={!s.enableGroupSyncing}
          {...text('groupJsonPath')}
        />
        <Switch
          label="Request the groups scope"
          description="Also ask for the groups scope at sign-in (some providers release the groups claim only then)"
          checked={s.addGroupsScope ?? false}
          disabled={!s.enableGroupSyncing}
          onChange={(e) => set({ addGroupsScope: e.currentTarget.checked })}
        />
        <Select
          label="ID token signing algorithm"
          data={[...ALGORITHMS]}
          value={s.idTokenSigningAlgorithm ?? 'RS256'}
          onChange={(v) => v && set({ idTokenSigningAlgorithm: v as (typeof ALGORITHMS)[number] })}
          allowDeselect={false}
        />
        <Group>
          <Button type="submit" loading={save.isPending}>
            Save settings
          </Button>
          <Button variant="default" color="red" loading={reset.isPending} onClick={() => window.confirm('Remove the single sign-on settings?') && reset.mutate()}>
            Remove settings
          </Button>
        </Group>
      </Stack>
    </form>
  )
}

const PASSWORD_KEY = ['password-sign-in'] as const

/** Password sign-in, which can be switched off while single sign-on is enabled; the deployment can always switch it back on. */
function PasswordSignIn({ oidcEnabled }: { oidcEnabled: boolean }) {
  const queryClient = useQueryClient()
  const stored = useQuery({ queryKey: PASSWORD_KEY, queryFn: () => ok(api.GET('/api/admin/auth/simple/settings')) })
  const save = useMutation({
    mutationFn: (disabled: boolean) => ok(api.POST('/api/admin/auth/simple/settings', { body: { disabled } })),
    onSuccess: (saved) => {
      queryClient.setQueryData(PASSWORD_KEY, saved)
      notifications.show({ message: saved.disabled ? 'Password sign-in switched off' : 'Password sign-in switched on', color: 'green' })
    },
  })
  if (stored.isPending) return <Loading />
  if (stored.isError) return <ErrorMessage error={stored.error} />
  const disabled = stored.data.disabled
  return (
    <Stack>
      <Title order={2} size="h3">
        Password sign-in
      </Title>
      {save.isError && <ErrorMessage error={save.error} />}
      <Switch
        label="Allow signing in with a username and password"
        checked={!disabled}
        disabled={save.isPending || (!oidcEnabled && !disabled)}
        onChange={(e) => (e.currentTarget.checked || window.confirm('Switch password sign-in off? Everyone then signs in with single sign-on.')) && save.mutate(!e.currentTarget.checked)}
      />
      <Alert color="blue" title="If single sign-on stops working">
        Password sign-in is refused only while OpenID Connect sign-in is enabled{oidcEnabled ? '' : ' (it is not, so passwords work)'}. Admin API tokens keep working, and starting
        Flagpost with <Code>FLAGPOST_ALLOW_PASSWORD_LOGIN=true</Code> lets passwords in again whatever is set here.
      </Alert>
    </Stack>
  )
}
