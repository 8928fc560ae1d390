import { useState } from 'react'
import { Alert, Anchor, Stack, Text, UnstyledButton } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, ok, type Schemas } from '../api/client'
import { Dialog } from './dialog'

type Banner = Schemas['bannerSchema']
export const BANNERS_KEY = ['banners'] as const

const COLORS: Record<Banner['variant'], string> = { info: 'indigo', warning: 'yellow', error: 'red', success: 'green' }

/** The link of a banner, if it is one the console follows: a path of the console, or an http(s) URL (the server takes no other). */
export function bannerLinkKind(link: string | null): 'dialog' | 'internal' | 'external' | undefined {
  if (!link) return undefined
  if (link === 'dialog') return 'dialog'
  if (link.startsWith('/') && !link.startsWith('//') && !link.includes('\\')) return 'internal'
  return /^https?:\/\//i.test(link) ? 'external' : undefined
}

/** The enabled banners, at the top of every signed-in page. Text only: a banner's message and dialog are never read as HTML. */
export function Banners() {
  const banners = useQuery({ queryKey: BANNERS_KEY, queryFn: () => ok(api.GET('/api/admin/banners')), staleTime: 60_000 })
  const shown = (banners.data?.banners ?? []).filter((b) => b.enabled)
  if (shown.length === 0) return null
  return (
    <Stack gap="xs" mb="md" aria-label="Announcements" component="section">
      {shown.map((b) => (
        <BannerView key={b.id} banner={b} />
      ))}
    </Stack>
  )
}

export function BannerView({ banner }: { banner: Banner }) {
  const [open, setOpen] = useState(false)
  const kind = bannerLinkKind(banner.link)
  const linkText = banner.linkText || 'More info'
  return (
    <Alert
      color={COLORS[banner.variant]}
      variant="light"
      role={banner.variant === 'error' || banner.variant === 'warning' ? 'alert' : 'status'}
      style={banner.sticky ? { position: 'sticky', top: 'calc(var(--app-shell-header-height, 0px) + 4px)', zIndex: 10 } : undefined}
    >
      <Text size="sm" c="dark.9" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
        {banner.message}{' '}
        {kind === 'internal' && (
          <Anchor component={Link} href={banner.link!} c="dark.9" underline="always" fw={600}>
            {linkText}
          </Anchor>
        )}
        {kind === 'external' && (
          <Anchor href={banner.link!} target="_blank" rel="noopener noreferrer" c="dark.9" underline="always" fw={600}>
            {linkText}
          </Anchor>
        )}
        {kind === 'dialog' && (
          <UnstyledButton onClick={() => setOpen(true)} style={{ textDecoration: 'underline', fontWeight: 600, fontSize: 'inherit' }}>
            {linkText}
          </UnstyledButton>
        )}
      </Text>
      {kind === 'dialog' && (
        <Dialog opened={open} onClose={() => setOpen(false)} title={banner.dialogTitle || linkText}>
          <Text style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{banner.dialog}</Text>
        </Dialog>
      )}
    </Alert>
  )
}
