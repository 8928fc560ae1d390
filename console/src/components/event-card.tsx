import { Anchor, Badge, Card, Code, Group, Text } from '@mantine/core'
import { Link } from 'wouter'
import type { Schemas } from '../api/client'
import { diff } from '../diff'
import { flagPath, projectPath } from '../paths'

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v))

/** An event: what, when, by whom, where, and its change as the difference between `preData` and `data`. */
export function EventCard({ event }: { event: Schemas['eventSchema'] }) {
  const changes = diff(event.preData ?? undefined, event.data ?? undefined)
  return (
    <Card withBorder padding="sm" component="article" aria-label={`Event ${event.id}: ${event.type}`}>
      <Group gap="xs">
        <Badge variant="light">{event.type}</Badge>
        <Text size="sm">{new Date(event.createdAt).toLocaleString()}</Text>
        <Text size="sm">by {event.createdBy}</Text>
        {event.project && (
          <Text size="sm">
            project{' '}
            <Anchor component={Link} href={projectPath(event.project)} inherit underline="always">
              {event.project}
            </Anchor>
          </Text>
        )}
        {event.featureName && (
          <Text size="sm">
            flag{' '}
            {event.project ? (
              <Anchor component={Link} href={flagPath(event.project, event.featureName)} inherit underline="always">
                {event.featureName}
              </Anchor>
            ) : (
              event.featureName
            )}
          </Text>
        )}
        {event.environment && <Text size="sm">in {event.environment}</Text>}
      </Group>
      {changes.length > 0 && (
        <Code block mt="xs" aria-label="Change" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
          {changes.map((c) => (c.kind === 'added' ? `+ ${c.path}: ${show(c.after)}` : c.kind === 'removed' ? `- ${c.path}: ${show(c.before)}` : `~ ${c.path}: ${show(c.before)} → ${show(c.after)}`)).join('\n')}
        </Code>
      )}
    </Card>
  )
}
