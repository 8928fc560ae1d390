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
  children,
}: {
  title: string
  secret: string | undefined
  onClose: () => void
  label?: string
  warning?: string
  /** Shown under the secret (an SDK token's snippets). */
  children?: ReactNode
}) {
  return (
    <Dialog opened={secret !== undefined} onClose={onClose} title={title} size="lg">
      <Stack>
        <Text fw={700}>{warning}</Text>
        {/* The secret in the monospace font, its label in the console's (ff on the root set the label's font, not the value's). */}
        <TextInput label={label[0]!.toUpperCase() + label.slice(1)} value={secret ?? ''} readOnly styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }} onFocus={(e) => e.currentTarget.select()} />
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
        {children}
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
  children: (created: (secret: string, more?: ReactNode) => void) => ReactNode
}) {
  const [shown, setShown] = useState<{ title: string; secret: string; more?: ReactNode }>()
  const created = (secret: string, more?: ReactNode) => {
    onClose()
    setShown({ title: secretTitle, secret, more })
  }
  return (
    <>
      <Dialog opened={opened} onClose={onClose} title={title} size={size}>
        {opened && children(created)}
      </Dialog>
      <SecretDialog title={shown?.title ?? ''} secret={shown?.secret} label={label} warning={warning} onClose={() => setShown(undefined)}>
        {shown?.more}
      </SecretDialog>
    </>
  )
}
