// Mantine's Tooltip as a module of its own, for a lazy import that takes it alone (not the whole of @mantine/core).
export { Tooltip } from '@mantine/core'
