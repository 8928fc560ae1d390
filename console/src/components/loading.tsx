import { Center, Loader } from '@mantine/core'

export function Loading() {
  return (
    <Center p="xl">
      <Loader aria-label="Loading" />
    </Center>
  )
}
