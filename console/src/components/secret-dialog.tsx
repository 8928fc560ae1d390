import { useState, type ReactNode } from 'react'
import { Button, CopyButton, Group, Stack, Text, TextInput } from '@mantine/core'
import { Dialog } from './dialog'

/** A new secret (or single-use link), shown once: the server keeps only its hash, and the console keeps nothing once this closes. */
export function SecretDialog({
  title,
  secret,
  onClose,
  label = 'secret',
  warning = 'You will not see this secret again: Flagpost stores only a hash of it. Copy it now.',
}: {
  title: string
  secret: string | undefined
  onClose: () => void
  label?: string
  warning?: string
}) {
  return (
    <Dialog opened={secret !== undefined} onClose={onClose} title={title} size="lg">
      <Stack>
        <Text fw={700}>{warning}</Text>
        <TextInput label={label[0]!.toUpperCase() + label.slice(1)} value={secret ?? ''} readOnly ff="monospace" onFocus={(e) => e.currentTarget.select()} />
        <Group>
          <CopyButton value={secret ?? ''}>
            {({ copied, copy }) => (
              <Button onClick={copy} color={copied ? 'teal.9' : undefined}>
                {copied ? 'Copied' : `Copy ${label}`}
              </Button>
            )}
          </CopyButton>
          <Button variant="default" onClick={onClose}>
            Done
          </Button>
        </Group>
      </Stack>
    </Dialog>
  )
}

/**
 * A dialog whose form makes something with a secret (a token, an invite link): once it is made the dialog closes and the
 * secret is shown once, in the SecretDialog titled `secretTitle` (as it was when the secret came).
 */
export function SecretFormDialog({
  opened,
  onClose,
  title,
  size,
  secretTitle,
  label,
  warning,
  children,
}: {
  opened: boolean
  onClose: () => void
  title: string
  size?: string
  secretTitle: string
  label?: string
  warning?: string
  children: (created: (secret: string) => void) => ReactNode
}) {
  const [shown, setShown] = useState<{ title: string; secret: string }>()
  const created = (secret: string) => {
    onClose()
    setShown({ title: secretTitle, secret })
  }
  return (
    <>
      <Dialog opened={opened} onClose={onClose} title={title} size={size}>
        {opened && children(created)}
      </Dialog>
      <SecretDialog title={shown?.title ?? ''} secret={shown?.secret} label={label} warning={warning} onClose={() => setShown(undefined)} />
    </>
  )
}
