import { useMutation, useQueryClient, type QueryKey } from '@tanstack/react-query'
import { notifications } from '@mantine/notifications'

/**
 * A write of the console's list pages: it runs `write`, then refreshes what shows the result (a query key to
 * invalidate, or a function) and says what it did. Its error is shown by the page (`ErrorMessage`).
 */
export function useChange<T>(write: (item: T) => Promise<unknown>, refresh: QueryKey | (() => Promise<unknown>), done: (item: T) => string) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: write,
    onSuccess: async (_: unknown, item: T) => {
      await (typeof refresh === 'function' ? refresh() : queryClient.invalidateQueries({ queryKey: refresh }))
      notifications.show({ message: done(item), color: 'green' })
    },
  })
}
