import { useMutation, useQueryClient, type QueryKey } from '@tanstack/react-query'
import { notifications } from '@mantine/notifications'

/**
 * A write of the console's list pages and their forms: it runs `write`, then refreshes what shows the result (a query
 * key to invalidate, or a function), says what it did, and goes on with `then` (a form's dialog closes). Its error is
 * shown by the page or the form (`ErrorMessage`).
 */
export function useChange<T>(write: (item: T) => Promise<unknown>, refresh: QueryKey | (() => Promise<unknown>), done: (item: T) => string, then?: () => void) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: write,
    onSuccess: async (_: unknown, item: T) => {
      await (typeof refresh === 'function' ? refresh() : queryClient.invalidateQueries({ queryKey: refresh }))
      notifications.show({ message: done(item), color: 'green' })
      then?.()
    },
  })
}
