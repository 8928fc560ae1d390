export const FLAG_TYPES = [
  { value: 'release', label: 'Release' },
  { value: 'experiment', label: 'Experiment' },
  { value: 'operational', label: 'Operational' },
  { value: 'kill-switch', label: 'Kill switch' },
  { value: 'permission', label: 'Permission' },
  { value: 'sunset', label: 'Sunset' },
] as const satisfies { value: string; label: string }[]

export type FlagType = (typeof FLAG_TYPES)[number]['value']
