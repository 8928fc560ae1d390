import { NumberInput, Switch, TextInput } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { api, ok, type Schemas } from '../api/client'

export type StrategyType = Schemas['strategySchema']
type Parameter = StrategyType['parameters'][number]

export const STRATEGY_TYPES_KEY = ['strategy-types'] as const

/** The strategy types (`GET /api/admin/strategies`): built-in and custom. */
export function useStrategyTypes() {
  return useQuery({ queryKey: STRATEGY_TYPES_KEY, queryFn: () => ok(api.GET('/api/admin/strategies')), staleTime: 30_000 })
}

/** What a custom type's parameter holds that the server refuses (src/strategy-definitions/fit.ts), or undefined. */
export function parameterProblem(p: Parameter, value: string | undefined): string | undefined {
  const v = value ?? ''
  if (v === '') return p.required ? `${p.name} is required` : undefined
  if (p.type === 'number' && !/^-?[0-9]+([.][0-9]+)?$/.test(v)) return `${p.name} must be a number`
  if (p.type === 'percentage' && !(/^[0-9]{1,3}$/.test(v) && Number(v) <= 100)) return `${p.name} must be a whole number from 0 to 100`
  if (p.type === 'boolean' && v !== 'true' && v !== 'false') return `${p.name} must be true or false`
  return undefined
}

/** An input for one parameter of a custom strategy type, by its type; every value is a string, as the API keeps them. */
export function ParameterInput({ parameter: p, value, onChange }: { parameter: Parameter; value: string | undefined; onChange: (value: string) => void }) {
  const description = [p.description, p.type === 'list' ? 'Values separated by commas' : undefined].filter(Boolean).join(' · ') || undefined
  if (p.type === 'boolean') {
    return <Switch label={p.name} description={p.description || undefined} checked={value === 'true'} onChange={(e) => onChange(String(e.currentTarget.checked))} />
  }
  if (p.type === 'percentage' || p.type === 'number') {
    return (
      <NumberInput
        label={p.type === 'percentage' ? `${p.name} (%)` : p.name}
        description={description}
        required={p.required}
        min={p.type === 'percentage' ? 0 : undefined}
        max={p.type === 'percentage' ? 100 : undefined}
        allowDecimal={p.type === 'number'}
        value={value ?? ''}
        onChange={(v) => onChange(v === '' ? '' : String(v))}
        error={value ? parameterProblem(p, value) : undefined}
        w={220}
      />
    )
  }
  return <TextInput label={p.name} description={description} required={p.required} value={value ?? ''} onChange={(e) => onChange(e.currentTarget.value)} />
}
