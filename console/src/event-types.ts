import type { Schemas } from './api/client'

export type EventType = Schemas['eventSchema']['type']

/** The event types most worth offering by name (the event log's filter, an integration's events); typed, so a renamed type fails the type check. */
export const COMMON_EVENT_TYPES: EventType[] = [
  'feature-created', 'feature-metadata-updated', 'feature-environment-enabled', 'feature-environment-disabled',
  'feature-strategy-add', 'feature-strategy-update', 'feature-strategy-remove', 'strategy-order-changed',
  'feature-archived', 'feature-revived', 'feature-tagged', 'feature-untagged', 'feature-stale-on', 'feature-stale-off',
  'project-created', 'project-updated', 'segment-created', 'segment-updated', 'segment-deleted', 'user-created', 'user-updated',
  'api-token-created',
]
