import type { EventTag, NewEvent } from '../events/types.js'

/** The event of switching a flag on or off in an environment: the same whoever switches it. */
export function switchedEvent(project: string, featureName: string, environment: string, enabled: boolean, tags: EventTag[]): NewEvent {
  return { type: enabled ? 'feature-environment-enabled' : 'feature-environment-disabled', project, featureName, environment, data: { enabled }, preData: { enabled: !enabled }, tags }
}
