import { useEffect, useState } from 'react'
import { useLocation, useSearch } from 'wouter'

/**
 * Whether the page's create dialog of `kind` is open: opened by `?create=<kind>` in the address (the command bar's
 * "Create …" actions) whenever it appears, on arrival or while the page is already shown, and the parameter is then
 * taken out of the address (replaced), so that the same action opens the dialog again after it was closed.
 */
export function useCreateIntent(kind: string): [boolean, (open: boolean) => void] {
  const search = useSearch()
  const [location, navigate] = useLocation()
  const [open, setOpen] = useState(() => new URLSearchParams(search).get('create') === kind)
  useEffect(() => {
    const params = new URLSearchParams(search)
    if (params.get('create') !== kind) return
    setOpen(true)
    params.delete('create')
    const rest = params.toString()
    navigate(`${location}${rest ? `?${rest}` : ''}`, { replace: true })
  }, [search, kind, location, navigate])
  return [open, setOpen]
}
