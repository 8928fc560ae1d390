import type { ComponentPropsWithRef } from 'react'
import { Avatar, Group, Text, UnstyledButton } from '@mantine/core'

/**
 * The header's account button, drawn at once; its menu is a chunk of its own (user-menu.tsx, see Shell) that takes this
 * button as its target once loaded.
 */
export function AccountButton({ name, ...button }: { name: string } & Omit<ComponentPropsWithRef<'button'>, 'name'>) {
  return (
    <UnstyledButton aria-label={`Account of ${name}`} {...button}>
      <Group gap="xs" wrap="nowrap">
        {/* Mantine's placeholder, not the API's imageUrl (an external avatar service): the console's CSP allows images of its own origin only, and no third party learns who uses the console. */}
        <Avatar alt="" size="sm" radius="xl" />
        <Text size="sm" visibleFrom="sm">
          {name}
        </Text>
      </Group>
    </UnstyledButton>
  )
}
