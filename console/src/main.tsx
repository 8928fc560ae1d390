import './mantine-frame-styles'
import './dark.css'
import { lazy, StrictMode, Suspense } from 'react'
import { createRoot } from 'react-dom/client'
import { MantineProvider, Notification, createTheme, darken, type CSSVariablesResolver } from '@mantine/core'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { navigate } from 'wouter/use-browser-location'
import { App, preloadFor } from './app'
import { ApiError, SIGN_IN_PATH, SIGN_UP_PATH, whenUnauthenticated } from './api/client'

// The notifications' container, a chunk of its own: drawn after the first page, and a notification shown before it
// arrives waits in @mantine/notifications' store (one module, shared with the pages that show them).
const Notifications = lazy(() => import('@mantine/notifications').then((m) => ({ default: m.Notifications })))

const queryClient = new QueryClient({
  defaultOptions: {
    // An error answer will not change by asking again; a network failure might.
    queries: { retry: (count, error) => !(error instanceof ApiError) && count < 2, refetchOnWindowFocus: false },
  },
})

whenUnauthenticated(() => {
  // The pages open to everyone (an invite link's) need no sign-in.
  if (window.location.pathname === SIGN_UP_PATH) return
  queryClient.clear()
  if (window.location.pathname !== SIGN_IN_PATH) {
    const next = window.location.pathname + window.location.search
    navigate(`${SIGN_IN_PATH}?next=${encodeURIComponent(next)}`, { replace: true })
  }
})

preloadFor(window.location.pathname, queryClient)

// Darker primary shades than Mantine's default blue so white text on buttons passes WCAG AA contrast.
const theme = createTheme({
  primaryColor: 'indigo',
  primaryShade: 8,
  // No transitions for those who ask their system for less motion (and for the browser tests, which do).
  respectReducedMotion: true,
  components: { Notification: Notification.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close notification' } } }) },
})

const resolver: CSSVariablesResolver = (theme) => ({
  variables: {},
  light: {
    // Mantine's dimmed text (gray 6) is below WCAG AA contrast on white; gray 7 passes.
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    // The light variant (the current page's NavLink, light buttons) writes shade 9 on shade 1, and on shade 2 under the
    // pointer: 4.1:1 for indigo, below AA's 4.5:1. Shade 9 darkened by a fifth passes on both (5.5:1 under the pointer).
    [`--mantine-color-${theme.primaryColor}-light-color`]: darken(theme.colors[theme.primaryColor]![9], 0.2),
  },
  // The dark scheme (prefers-color-scheme, or the header's switch): the shades the pages name for warnings, errors and
  // states (red.8, red.9, orange.9, green.9 ...) are dark ones, legible on white and not on Mantine's dark grey; here
  // they are light shades, so every page passes AA contrast in both schemes without knowing which one it is in.
  dark: {
    '--mantine-color-dimmed': 'var(--mantine-color-dark-1)',
    ...Object.fromEntries(
      ['red', 'orange', 'yellow', 'green', 'teal', 'gray'].flatMap((color) => [
        [`--mantine-color-${color}-7`, theme.colors[color]![3]],
        [`--mantine-color-${color}-8`, theme.colors[color]![3]],
        [`--mantine-color-${color}-9`, theme.colors[color]![2]],
      ]),
    ),
    '--mantine-color-dark-9': 'var(--mantine-color-dark-0)',
    '--mantine-color-blue-0': 'var(--mantine-color-dark-6)',
    // The light variant (badges, the current page's link) writes its colour's light-color on a tint of it: shade 2 of
    // every colour is legible on those tints over the dark body.
    ...Object.fromEntries(Object.keys(theme.colors).map((color) => [`--mantine-color-${color}-light-color`, theme.colors[color]![2]])),
  },
})

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} cssVariablesResolver={resolver} defaultColorScheme="auto">
      <Suspense fallback={null}>
        <Notifications />
      </Suspense>
      <QueryClientProvider client={queryClient}>
        <App />
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
)
