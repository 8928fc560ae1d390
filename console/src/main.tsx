import '@mantine/core/styles.css'
import '@mantine/notifications/styles.css'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { MantineProvider, createTheme } from '@mantine/core'
import { Notifications } from '@mantine/notifications'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { navigate } from 'wouter/use-browser-location'
import { App } from './app'
import { ApiError, SIGN_IN_PATH, whenUnauthenticated } from './api/client'

const queryClient = new QueryClient({
  defaultOptions: {
    // An error answer will not change by asking again; a network failure might.
    queries: { retry: (count, error) => !(error instanceof ApiError) && count < 2, refetchOnWindowFocus: false },
  },
})

whenUnauthenticated(() => {
  queryClient.clear()
  if (window.location.pathname !== SIGN_IN_PATH) {
    const next = window.location.pathname + window.location.search
    navigate(`${SIGN_IN_PATH}?next=${encodeURIComponent(next)}`, { replace: true })
  }
})

// Darker primary shades than Mantine's default blue so white text on buttons passes WCAG AA contrast.
const theme = createTheme({ primaryColor: 'indigo', primaryShade: 8 })

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme}>
      <Notifications />
      <QueryClientProvider client={queryClient}>
        <App />
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
)
