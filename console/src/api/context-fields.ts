import { useQuery } from '@tanstack/react-query'
import { api, ok } from './client'

/** The context fields of this instance (`GET /api/admin/context`): the context fields page and the constraint editor's suggestions. */
export const CONTEXT_FIELDS_KEY = ['context-fields'] as const
export const useContextFields = () => useQuery({ queryKey: CONTEXT_FIELDS_KEY, queryFn: () => ok(api.GET('/api/admin/context')) })
