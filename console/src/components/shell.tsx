import type { ReactNode } from 'react'
import { AppShell, Avatar, Burger, Group, Menu, NavLink, Text, Title, UnstyledButton } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { useQueryClient } from '@tanstack/react-query'
import { Link, useLocation } from 'wouter'
import { api, SIGN_IN_PATH } from '../api/client'
import { allowsSomewhere, useMe, type User } from '../api/session'
import { ChangePasswordDialog } from './change-password'
import { Banners } from './banners'

type Permissions = Parameters<typeof allowsSomewhere>[0]
interface Page {
  href: string
  label: string
  exact: boolean
  /** Whether the signed-in user may use the page; absent: everyone may. */
  shownTo?: (permissions: Permissions) => boolean
}

const PAGES: Page[] = [
  { href: '/', label: 'Home', exact: true },
  { href: '/projects', label: 'Projects', exact: false },
  { href: '/events', label: 'Event log', exact: true },
  { href: '/playground', label: 'Playground', exact: true },
  { href: '/applications', label: 'Applications', exact: true },
]

const may = (...names: string[]) => (permissions: Permissions) => names.some((name) => allowsSomewhere(permissions, name))

const ADMIN_PAGES: Page[] = [
  { href: '/segments', label: 'Segments', exact: true },
  { href: '/context-fields', label: 'Context fields', exact: true },
  { href: '/tag-types', label: 'Tag types', exact: true, shownTo: may('CREATE_TAG_TYPE', 'UPDATE_TAG_TYPE', 'DELETE_TAG_TYPE') },
  { href: '/flag-types', label: 'Flag types', exact: true },
  { href: '/environments', label: 'Environments', exact: true },
  { href: '/strategy-types', label: 'Strategy types', exact: true },
  { href: '/api-tokens', label: 'API tokens', exact: true, shownTo: may('READ_CLIENT_API_TOKEN', 'READ_FRONTEND_API_TOKEN') },
  { href: '/personal-tokens', label: 'Personal access tokens', exact: true },
  { href: '/integrations', label: 'Integrations', exact: true, shownTo: may('ADMIN') },
  { href: '/signal-endpoints', label: 'Signal endpoints', exact: true, shownTo: may('ADMIN') },
  { href: '/users', label: 'Users', exact: true, shownTo: may('ADMIN') },
  { href: '/service-accounts', label: 'Service accounts', exact: true, shownTo: may('ADMIN') },
  { href: '/groups', label: 'Groups', exact: true, shownTo: may('ADMIN') },
  { href: '/roles', label: 'Roles', exact: true, shownTo: may('ADMIN') },
  { href: '/invite-links', label: 'Invite links', exact: true, shownTo: may('ADMIN') },
  { href: '/single-sign-on', label: 'Single sign-on', exact: true, shownTo: may('ADMIN') },
  { href: '/banners', label: 'Banners', exact: true, shownTo: may('ADMIN') },
  { href: '/instance-state', label: 'Backup and restore', exact: true, shownTo: may('ADMIN') },
]

/** The frame of every signed-in page: navigation, and the user's menu with sign-out. */
export function Shell({ user, children }: { user: User; children: ReactNode }) {
  const [opened, { toggle, close }] = useDisclosure()
  const [changingPassword, passwordDialog] = useDisclosure()
  const [location, setLocation] = useLocation()
  const queryClient = useQueryClient()
  const permissions = useMe().data?.permissions
  const name = user.name ?? user.username ?? user.email ?? `user ${user.id}`

  async function signOut() {
    const { data } = await api.POST('/logout')
    queryClient.clear()
    // Single sign-out: the provider ends its session too, then sends the browser back to the sign-in page.
    if (data?.redirectUrl) window.location.assign(data.redirectUrl)
    else setLocation(SIGN_IN_PATH)
  }

  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Group gap="sm">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <Title order={2} size="h4">
              Flagpost
            </Title>
          </Group>
          <Menu position="bottom-end" withinPortal>
            <Menu.Target>
              <UnstyledButton aria-label={`Account of ${name}`}>
                <Group gap="xs">
                  <Avatar src={user.imageUrl} alt="" size="sm" radius="xl" />
                  <Text size="sm">{name}</Text>
                </Group>
              </UnstyledButton>
            </Menu.Target>
            <Menu.Dropdown>
              <Menu.Label>Signed in as {user.username ?? user.email ?? name}</Menu.Label>
              <Menu.Item onClick={passwordDialog.open}>Change password</Menu.Item>
              <Menu.Item onClick={() => void signOut()}>Sign out</Menu.Item>
            </Menu.Dropdown>
          </Menu>
          <ChangePasswordDialog opened={changingPassword} onClose={passwordDialog.close} />
        </Group>
      </AppShell.Header>
      {/* The navigation scrolls on its own when its pages outgrow the window's height. */}
      <AppShell.Navbar p="xs" aria-label="Main" style={{ overflowY: 'auto' }}>
        {PAGES.map((page) => (
          <PageLink key={page.href} page={page} location={location} onClick={close} />
        ))}
        <Text size="xs" fw={700} c="dimmed" mt="md" mb={4} px="sm" component="h2">
          Admin
        </Text>
        {ADMIN_PAGES.filter((page) => page.shownTo?.(permissions) ?? true).map((page) => (
          <PageLink key={page.href} page={page} location={location} onClick={close} />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        <Banners />
        {children}
      </AppShell.Main>
    </AppShell>
  )
}

function PageLink({ page, location, onClick }: { page: Page; location: string; onClick: () => void }) {
  const active = page.exact ? location === page.href : location === page.href || location.startsWith(`${page.href}/`)
  return <NavLink component={Link} href={page.href} label={page.label} active={active} onClick={onClick} aria-current={active ? 'page' : undefined} />
}
