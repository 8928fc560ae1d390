import { lazy, Suspense, useEffect, useState, type ReactNode } from 'react'
import { ActionIcon, AppShell, Badge, Burger, Group, Kbd, NavLink, Text, Title, UnstyledButton, useComputedColorScheme, useMantineColorScheme } from '@mantine/core'
import { useDisclosure, useLocalStorage } from '@mantine/hooks'
import { useQueryClient } from '@tanstack/react-query'
import { IconMoon, IconSearch, IconSun } from '@tabler/icons-react'
import { Link, useLocation } from 'wouter'
import { api, SIGN_IN_PATH } from '../api/client'
import { useMe, type User } from '../api/session'
import { isCurrent, titleOf, visibleGroups, type Page } from '../navigation'
import { AccountButton } from './account-button'
import classes from './shell.module.css'
import { usePendingApprovals } from '../api/change-requests'

// Chunks of their own, loaded the first time they open: the first page needs neither.
const CommandBar = lazy(() => import('./command-bar').then((m) => ({ default: m.CommandBar })))
const ChangePasswordDialog = lazy(() => import('./change-password').then((m) => ({ default: m.ChangePasswordDialog })))
// Chunks of their own too, loaded as the shell is first drawn, after the first page's own chunk and data: the banners
// (their query starts with them) and the account's menu (its button is drawn at once, see AccountButton).
const Banners = lazy(() => import('./banners').then((m) => ({ default: m.Banners })))
const UserMenu = lazy(() => import('./user-menu').then((m) => ({ default: m.UserMenu })))
// Mantine's Tooltip brings floating-ui (about 13 KiB gzipped) that no first page needs before the pointer rests here.
const Tooltip = lazy(() => import('./tooltip').then((m) => ({ default: m.Tooltip })))

/** The frame of every signed-in page: skip link, navigation, command bar, colour scheme switch and the user's menu. */
export function Shell({ user, children }: { user: User; children: ReactNode }) {
  const [opened, { toggle, close }] = useDisclosure()
  const [changingPassword, passwordDialog] = useDisclosure()
  const [searching, search] = useDisclosure()
  // The account button clicked before its menu's chunk arrived: the menu opens as it does.
  const [menuWanted, setMenuWanted] = useState(false)
  const [location, setLocation] = useLocation()
  const queryClient = useQueryClient()
  const permissions = useMe().data?.permissions
  // The change requests waiting for the user's approval, counted in the navigation.
  const waiting = usePendingApprovals(user.id).data?.total
  const name = user.name ?? user.username ?? user.email ?? `user ${user.id}`
  // Groups the user closed stay closed (this browser).
  const [closedGroups, setClosedGroups] = useLocalStorage<string[]>({ key: 'flagpost-closed-navigation-groups', defaultValue: [] })

  useEffect(() => {
    document.title = titleOf(location)
  }, [location])

  // Ctrl-K (⌘K) anywhere, and "/" outside a field, open the command bar.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement | null
      const typing = target?.closest('input, textarea, select, [contenteditable="true"]') != null
      if ((event.key === 'k' || event.key === 'K') && (event.ctrlKey || event.metaKey) && !event.altKey) {
        event.preventDefault()
        search.open()
      } else if (event.key === '/' && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
        event.preventDefault()
        search.open()
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [search])

  async function signOut() {
    const { data } = await api.POST('/logout')
    queryClient.clear()
    // Single sign-out: the provider ends its session too, then sends the browser back to the sign-in page.
    if (data?.redirectUrl) window.location.assign(data.redirectUrl)
    else setLocation(SIGN_IN_PATH)
  }

  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 240, breakpoint: 'lg', collapsed: { mobile: !opened } }} padding="md">
      <a href="#main" className={classes.skip}>
        Skip to content
      </a>
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="lg" size="sm" aria-label="Toggle navigation" aria-expanded={opened} />
            <Title order={2} size="h4">
              Flagpost
            </Title>
          </Group>
          <Group gap="xs" wrap="nowrap">
            <UnstyledButton className={classes.search} onClick={search.open} aria-keyshortcuts="Control+K /">
              <Group gap="xs" wrap="nowrap">
                <IconSearch size={16} aria-hidden />
                <Text size="sm">Find</Text>
                <Kbd size="xs" visibleFrom="sm">
                  Ctrl K
                </Kbd>
              </Group>
            </UnstyledButton>
            <ColorSchemeSwitch />
            <Suspense fallback={<AccountButton name={name} onClick={() => setMenuWanted(true)} />}>
              <UserMenu
                name={name}
                signedInAs={user.username ?? user.email ?? name}
                defaultOpened={menuWanted}
                onChangePassword={passwordDialog.open}
                onSignOut={() => void signOut()}
              />
            </Suspense>
          </Group>
          {changingPassword && (
            <Suspense fallback={null}>
              <ChangePasswordDialog opened onClose={passwordDialog.close} />
            </Suspense>
          )}
        </Group>
      </AppShell.Header>
      {/* The navigation scrolls on its own when its pages outgrow the window's height. */}
      <AppShell.Navbar p="xs" aria-label="Main" style={{ overflowY: 'auto' }}>
        {visibleGroups(permissions).map((group) => {
          const groupOpened = !closedGroups.includes(group.label)
          return (
            <NavLink
              key={group.label}
              component="button"
              label={group.label}
              opened={groupOpened}
              onChange={(open) => setClosedGroups((list) => (open ? list.filter((g) => g !== group.label) : [...list, group.label]))}
              aria-expanded={groupOpened}
              fw={700}
              childrenOffset={0}
              classNames={{ label: classes.groupLabel }}
            >
              {group.pages.map((page) => (
                <PageLink key={page.href} page={page} location={location} onClick={close} count={page.href === '/approvals' ? waiting : undefined} />
              ))}
            </NavLink>
          )
        })}
      </AppShell.Navbar>
      <AppShell.Main id="main" tabIndex={-1} className={classes.main}>
        <Suspense fallback={null}>
          <Banners />
        </Suspense>
        {children}
      </AppShell.Main>
      {searching && (
        <Suspense fallback={null}>
          <CommandBar opened onClose={search.close} />
        </Suspense>
      )}
    </AppShell>
  )
}

/** A page of the navigation; `count`, when above 0, is shown after its name (the approvals waiting). */
function PageLink({ page, location, onClick, count }: { page: Page; location: string; onClick: () => void; count?: number }) {
  const active = isCurrent(page, location)
  const Icon = page.icon
  return (
    <NavLink
      component={Link}
      href={page.href}
      label={page.label}
      rightSection={
        count ? (
          <Badge size="sm" circle={count < 10} color="red.9" aria-label={`${count} waiting for your approval`}>
            {count}
          </Badge>
        ) : undefined
      }
      leftSection={<Icon size={18} stroke={1.6} aria-hidden />}
      active={active}
      onClick={onClick}
      aria-current={active ? 'page' : undefined}
    />
  )
}

/** Light or dark: the system's (prefers-color-scheme) until the user picks one here, then theirs (localStorage). */
function ColorSchemeSwitch() {
  const { setColorScheme } = useMantineColorScheme()
  const computed = useComputedColorScheme('light')
  const [dark, setDark] = useState(computed === 'dark')
  useEffect(() => setDark(computed === 'dark'), [computed])
  const label = dark ? 'Use light colours' : 'Use dark colours'
  const button = (
    <ActionIcon variant="default" size="lg" aria-pressed={dark} aria-label="Dark colours" onClick={() => setColorScheme(dark ? 'light' : 'dark')}>
      {dark ? <IconSun size={18} aria-hidden /> : <IconMoon size={18} aria-hidden />}
    </ActionIcon>
  )
  return (
    <Suspense fallback={button}>
      <Tooltip label={label}>{button}</Tooltip>
    </Suspense>
  )
}
