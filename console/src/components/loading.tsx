import { Center, Loader } from '@mantine/core'

export function Loading() {
  return (
    <Center p="xl">
      <Loader role="status" aria-label="Loading" />
    </Center>
  )
}
