import type { ComponentType } from 'react'
import {
  IconAntenna,
  IconApps,
  IconChecklist,
  IconCategory,
  IconDatabaseExport,
  IconFlag,
  IconFolders,
  IconHistory,
  IconHome,
  IconKey,
  IconLink,
  IconLogin2,
  IconPlayerPlay,
  IconPlugConnected,
  IconPuzzle,
  IconRobot,
  IconServer,
  IconShieldLock,
  IconSpeakerphone,
  IconTags,
  IconUserCircle,
  IconUsers,
  IconUsersGroup,
  IconAdjustmentsHorizontal,
} from '@tabler/icons-react'
import { allowsSomewhere } from './api/session'

export type Permissions = Parameters<typeof allowsSomewhere>[0]

/** A page of the navigation (and of the command bar). */
export interface Page {
  href: string
  label: string
  exact: boolean
  icon: ComponentType<{ size?: number; stroke?: number; 'aria-hidden'?: boolean }>
  /** Whether the signed-in user may use the page; absent: everyone may. */
  shownTo?: (permissions: Permissions) => boolean
}

export interface PageGroup {
  label: string
  pages: Page[]
}

const may = (...names: string[]) => (permissions: Permissions) => names.some((name) => allowsSomewhere(permissions, name))

export const PAGE_GROUPS: PageGroup[] = [
  {
    label: 'Flags',
    pages: [
      { href: '/', label: 'Home', exact: true, icon: IconHome },
      { href: '/projects', label: 'Projects', exact: false, icon: IconFolders },
      { href: '/playground', label: 'Playground', exact: true, icon: IconPlayerPlay },
      { href: '/approvals', label: 'Approvals', exact: true, icon: IconChecklist },
      { href: '/events', label: 'Event log', exact: true, icon: IconHistory },
      { href: '/applications', label: 'Applications', exact: true, icon: IconApps },
    ],
  },
  {
    label: 'Configure',
    pages: [
      { href: '/segments', label: 'Segments', exact: true, icon: IconCategory },
      { href: '/context-fields', label: 'Context fields', exact: true, icon: IconAdjustmentsHorizontal },
      { href: '/tag-types', label: 'Tag types', exact: true, icon: IconTags, shownTo: may('CREATE_TAG_TYPE', 'UPDATE_TAG_TYPE', 'DELETE_TAG_TYPE') },
      { href: '/flag-types', label: 'Flag types', exact: true, icon: IconFlag },
      { href: '/environments', label: 'Environments', exact: true, icon: IconServer },
      { href: '/strategy-types', label: 'Strategy types', exact: true, icon: IconPuzzle },
      { href: '/integrations', label: 'Integrations', exact: true, icon: IconPlugConnected, shownTo: may('ADMIN') },
      { href: '/signal-endpoints', label: 'Signal endpoints', exact: true, icon: IconAntenna, shownTo: may('ADMIN') },
    ],
  },
  {
    label: 'Tokens',
    pages: [
      { href: '/api-tokens', label: 'API tokens', exact: true, icon: IconKey, shownTo: may('READ_CLIENT_API_TOKEN', 'READ_FRONTEND_API_TOKEN') },
      { href: '/personal-tokens', label: 'Personal access tokens', exact: true, icon: IconUserCircle },
    ],
  },
  {
    label: 'Admin',
    pages: [
      { href: '/users', label: 'Users', exact: true, icon: IconUsers, shownTo: may('ADMIN') },
      { href: '/service-accounts', label: 'Service accounts', exact: true, icon: IconRobot, shownTo: may('ADMIN') },
      { href: '/groups', label: 'Groups', exact: true, icon: IconUsersGroup, shownTo: may('ADMIN') },
      { href: '/roles', label: 'Roles', exact: true, icon: IconShieldLock, shownTo: may('ADMIN') },
      { href: '/invite-links', label: 'Invite links', exact: true, icon: IconLink, shownTo: may('ADMIN') },
      { href: '/single-sign-on', label: 'Single sign-on', exact: true, icon: IconLogin2, shownTo: may('ADMIN') },
      { href: '/banners', label: 'Banners', exact: true, icon: IconSpeakerphone, shownTo: may('ADMIN') },
      { href: '/instance-state', label: 'Backup and restore', exact: true, icon: IconDatabaseExport, shownTo: may('ADMIN') },
    ],
  },
]

/** The groups with the pages the user may use (a group left empty is left out). */
export const visibleGroups = (permissions: Permissions): PageGroup[] =>
  PAGE_GROUPS.map((group) => ({ ...group, pages: group.pages.filter((page) => page.shownTo?.(permissions) ?? true) })).filter((group) => group.pages.length > 0)

export const isCurrent = (page: Page, location: string) => (page.exact ? location === page.href : location === page.href || location.startsWith(`${page.href}/`))

const PROJECT_PAGES: Record<string, string> = {
  archive: 'Archived flags',
  'context-fields': 'Context fields',
  actions: 'Actions',
  'api-tokens': 'API tokens',
  'change-requests': 'Change requests',
}

const decode = (part: string) => {
  try {
    return decodeURIComponent(part)
  } catch {
    return part
  }
}

/** The document's title for an address: the page's name, then the project or flag it shows, then Flagpost. */
export function titleOf(location: string): string {
  const parts = location.split('/').filter(Boolean).map(decode)
  let name: string
  if (parts[0] === 'projects' && parts.length >= 2) {
    const project = parts[1]!
    if (parts[2] === 'flags' && parts[3]) name = `${parts[3]} · ${project}`
    else if (parts[2] === 'change-requests' && parts[3]) name = `Change request ${parts[3]} · ${project}`
    // The settings page puts the project's name in place of its id once it has read it (pages/project-settings.tsx).
    else if (parts[2] === 'settings') name = `${project} · Settings`
    else if (parts[2] && PROJECT_PAGES[parts[2]]) name = `${PROJECT_PAGES[parts[2]]} · ${project}`
    else name = `Project ${project}`
  } else {
    const page = PAGE_GROUPS.flatMap((g) => g.pages).find((p) => p.href === location)
    name = location === '/' ? 'Dashboard' : (page?.label ?? 'Not found')
  }
  return `${name} · Flagpost`
}
