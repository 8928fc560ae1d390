import { useState } from 'react'
import { Button, Group, PasswordInput, Select, Stack, Switch, Text, TextInput, Title } from '@mantine/core'
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
      {/* Keyed by the stored settings, so a save or reset starts the form again from what the server holds. */}
      <OidcForm key={JSON.stringify(settings.data)} stored={settings.data} />
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
          value={s.defaultRootRole ?? 'Viewer'}
          onChange={(v) => v && set({ defaultRootRole: v as (typeof ROOT_ROLES)[number] })}
          allowDeselect={false}
        />
        <TextInput label="E-mail domains" description="Comma-separated, e.g. example.com,example.org; empty for any" {...text('emailDomains')} />
        <Switch label="Single sign-out" description="Signing out ends every session of the client id" checked={s.enableSingleSignOut ?? false} onChange={(e) => set({ enableSingleSignOut: e.currentTarget.checked })} />
        <TextInput label="ACR values" description="Space-separated" {...text('acrValues')} />
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
