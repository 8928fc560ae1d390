import { useState } from 'react'
import { Select, type SelectProps } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { keepPreviousData, useQuery } from '@tanstack/react-query'

/** How many options a picker asks the server for at a time. */
export const PICKER_PAGE = 20

/**
 * A Select whose options the server finds as the user types (debounced): `search(text)` answers at most PICKER_PAGE
 * names; nothing is loaded whole, whatever there are thousands of. `queryKey` names what is searched (it and the
 * text key the cache). The server's answer is shown as it is (no filtering again in the browser).
 */
export function ServerSelect({
  queryKey,
  search,
  value,
  onChange,
  ...props
}: { queryKey: readonly unknown[]; search: (text: string) => Promise<string[]>; value: string | null; onChange: (value: string | null) => void } & Omit<SelectProps, 'data' | 'value' | 'onChange' | 'searchable' | 'filter'>) {
  const [text, setText] = useState('')
  const [typed] = useDebouncedValue(text, 200)
  // Once a value is chosen the field shows it: ask for the options of a new word only.
  const asked = typed === value ? '' : typed
  const options = useQuery({ queryKey: [...queryKey, 'picker', asked], queryFn: () => search(asked), placeholderData: keepPreviousData, staleTime: 10_000 })
  const names = options.data ?? []
  const data = value && !names.includes(value) ? [value, ...names] : names
  return (
    <Select
      {...props}
      data={data}
      value={value}
      onChange={onChange}
      searchable
      searchValue={text}
      onSearchChange={setText}
      filter={({ options: all }) => all}
      nothingFoundMessage={options.isFetching ? 'Searching…' : 'Nothing found'}
    />
  )
}
