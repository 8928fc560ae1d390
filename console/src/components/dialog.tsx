import type { ReactNode } from 'react'
import { Modal } from '@mantine/core'

// Modal's header is a <header> element, which axe counts as a second banner next to the shell's; a <div> here.
const headerAsDiv = { component: 'div' } as object

/** What a dialog's first field is: a control the user types into or picks with (not a Select's hidden value). */
const FIELD = 'input:not([type=hidden]):not([disabled]), textarea:not([disabled]), select:not([disabled])'

/**
 * Gives a dialog's first field the focus as it opens. Mantine's focus trap focuses `[data-autofocus]`, else the first
 * tabbable element (the header's close button): the field drawn with the body is marked for it as the body mounts,
 * before the trap looks (a timeout later). A field drawn later (its form in a chunk of its own, or after a read) is
 * focused as it appears, while the focus is still where the dialog put it (the close button). A dialog naming its own
 * (`data-autofocus` in its body) keeps it; one without a field keeps the close button.
 */
function focusFirstField(body: HTMLDivElement | null) {
  if (!body || body.querySelector('[data-autofocus]')) return
  const field = body.querySelector<HTMLElement>(FIELD)
  if (field) {
    field.setAttribute('data-autofocus', '')
    return
  }
  const content = body.closest<HTMLElement>('[role=dialog]')
  const observer = new MutationObserver(() => {
    const late = body.querySelector<HTMLElement>(FIELD)
    if (!late) return
    observer.disconnect()
    const active = document.activeElement
    const untouched = active === null || active === document.body || active === content || active.matches('.mantine-Modal-close')
    if (untouched) late.focus({ preventScroll: true })
  })
  observer.observe(body, { childList: true, subtree: true })
  return () => observer.disconnect()
}

/** A modal dialog named by its title, with a named close button; its first field takes the focus as it opens. */
export function Dialog({ opened, onClose, title, size, children }: { opened: boolean; onClose: () => void; title: string; size?: string; children: ReactNode }) {
  return (
    <Modal.Root opened={opened} onClose={onClose} size={size}>
      <Modal.Overlay />
      <Modal.Content>
        <Modal.Header {...headerAsDiv}>
          <Modal.Title>{title}</Modal.Title>
          <Modal.CloseButton aria-label="Close" />
        </Modal.Header>
        <Modal.Body ref={focusFirstField}>{children}</Modal.Body>
      </Modal.Content>
    </Modal.Root>
  )
}
