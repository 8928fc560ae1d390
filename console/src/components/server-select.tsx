import { useState } from 'react'
import { Select, type OptionsFilter, type SelectProps } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { keepPreviousData, useQuery } from '@tanstack/react-query'

/** How many options a picker asks the server for at a time. */
export const PICKER_PAGE = 20

// The server already searched: its answer is shown as it is.
const asAnswered: OptionsFilter<string> = ({ options }) => options

/**
 * What every picker searching on the server shares (ServerSelect, SegmentPicker): the text typed, debounced 200 ms and
 * trimmed, asked of `search` (at most PICKER_PAGE items, never the whole list, whatever there are thousands of), the
 * previous answer kept while the next comes, and the props that make a Mantine Select or MultiSelect show the answer
 * as it is. `queryKey` names what is searched (it and the text key the cache); `asked` turns the typed text into the
 * text asked for (a Select showing its chosen value asks for every option).
 */
export function useServerSearch<T>(queryKey: readonly unknown[], search: (text: string) => Promise<T[]>, asked: (typed: string) => string = (typed) => typed) {
  const [text, setText] = useState('')
  const [typed] = useDebouncedValue(text.trim(), 200)
  const question = asked(typed)
  const found = useQuery({ queryKey: [...queryKey, 'picker', question], queryFn: () => search(question), placeholderData: keepPreviousData, staleTime: 10_000 })
  return {
    found,
    question,
    props: { searchable: true, searchValue: text, onSearchChange: setText, filter: asAnswered, nothingFoundMessage: found.isFetching ? 'Searching…' : 'Nothing found' },
  }
}

/** A Select whose options the server finds as the user types (see useServerSearch). */
export function ServerSelect({
  queryKey,
  search,
  value,
  onChange,
  ...props
}: { queryKey: readonly unknown[]; search: (text: string) => Promise<string[]>; value: string | null; onChange: (value: string | null) => void } & Omit<SelectProps, 'data' | 'value' | 'onChange' | 'searchable' | 'filter'>) {
  // Once a value is chosen the field shows it: ask for the options of a new word only.
  const { found, props: searching } = useServerSearch(queryKey, search, (typed) => (typed === value ? '' : typed))
  const names = found.data ?? []
  const data = value && !names.includes(value) ? [value, ...names] : names
  return <Select {...props} {...searching} data={data} value={value} onChange={onChange} />
}
