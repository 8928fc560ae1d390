import { Alert, Button, Code, CopyButton, Stack } from '@mantine/core'
import { Dialog } from './dialog'

/** A new secret (or single-use link), shown once: the server keeps only its hash, and the console keeps nothing once this closes. */
export function SecretDialog({ title, secret, onClose, label = 'secret', warning = 'You will not see this secret again: Flagpost stores only a hash of it.' }: { title: string; secret: string | undefined; onClose: () => void; label?: string; warning?: string }) {
  return (
    <Dialog opened={secret !== undefined} onClose={onClose} title={title} size="lg">
      <Stack>
        <Alert color="yellow" title="Copy it now" variant="light">
          {warning}
        </Alert>
        <Code block aria-label={label[0]!.toUpperCase() + label.slice(1)}>
          {secret}
        </Code>
        <CopyButton value={secret ?? ''}>
          {({ copied, copy }) => (
            <Button onClick={copy} color={copied ? 'teal' : undefined} w="fit-content">
              {copied ? 'Copied' : `Copy ${label}`}
            </Button>
          )}
        </CopyButton>
        <Button variant="default" onClick={onClose} w="fit-content">
          Done
        </Button>
      </Stack>
    </Dialog>
  )
}
