import type { ReactNode } from 'react'
import { Modal } from '@mantine/core'

// Modal's header is a <header> element, which axe counts as a second banner next to the shell's; a <div> here.
const headerAsDiv = { component: 'div' } as object

/** A modal dialog named by its title, with a named close button. */
export function Dialog({ opened, onClose, title, size, children }: { opened: boolean; onClose: () => void; title: string; size?: string; children: ReactNode }) {
  return (
    <Modal.Root opened={opened} onClose={onClose} size={size}>
      <Modal.Overlay />
      <Modal.Content>
        <Modal.Header {...headerAsDiv}>
          <Modal.Title>{title}</Modal.Title>
          <Modal.CloseButton aria-label="Close" />
        </Modal.Header>
        <Modal.Body>{children}</Modal.Body>
      </Modal.Content>
    </Modal.Root>
  )
}
