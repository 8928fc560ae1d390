import type { ReactNode } from 'react'
import { Group } from '@mantine/core'

/**
 * A switch, checkbox or button in a row of labelled inputs (a Group with `align="end"`): as tall as an input (Mantine's
 * size sm; its height variable is scoped to the input) and centred on it, so it lines up with the inputs' boxes rather
 * than with their labels or the row's bottom edge.
 */
export function BesideInput({ children }: { children: ReactNode }) {
  return (
    <Group h="calc(2.25rem * var(--mantine-scale))" align="center" wrap="nowrap" gap="xs">
      {children}
    </Group>
  )
}
