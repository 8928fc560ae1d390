import { useState, type FormEvent } from 'react'
import { Button, Group, PasswordInput, Stack, Text } from '@mantine/core'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useLocation } from 'wouter'
import { api, ok, SIGN_IN_PATH } from '../api/client'
import { Dialog } from './dialog'
import { ErrorMessage } from './error-message'

const MIN_LENGTH = 8

/**
 * The signed-in user's own password (POST /api/admin/user/change-password). The server ends every session of the
 * user on success, this one too, so the user signs in again with the new password.
 */
export function ChangePasswordDialog({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const [oldPassword, setOldPassword] = useState('')
  const [password, setPassword] = useState('')
  const [confirmPassword, setConfirmPassword] = useState('')
  const [, setLocation] = useLocation()
  const queryClient = useQueryClient()
  const change = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/user/change-password', { body: { oldPassword, password, confirmPassword } })),
    onSuccess: () => {
      queryClient.clear()
      setLocation(`${SIGN_IN_PATH}?changed=1`)
    },
  })
  const tooShort = password.length > 0 && password.length < MIN_LENGTH
  const differs = confirmPassword.length > 0 && confirmPassword !== password
  const ready = oldPassword.length > 0 && password.length >= MIN_LENGTH && confirmPassword === password

  function submit(event: FormEvent) {
    event.preventDefault()
    if (ready) change.mutate()
  }

  function close() {
    setOldPassword('')
    setPassword('')
    setConfirmPassword('')
    change.reset()
    onClose()
  }

  return (
    <Dialog opened={opened} onClose={close} title="Change your password">
      <form onSubmit={submit}>
        <Stack>
          <Text size="sm">Every session of yours ends when it changes: you sign in again with the new password.</Text>
          <PasswordInput label="Current password" autoComplete="current-password" value={oldPassword} onChange={(e) => setOldPassword(e.currentTarget.value)} required />
          <PasswordInput
            label="New password"
            autoComplete="new-password"
            value={password}
            onChange={(e) => setPassword(e.currentTarget.value)}
            error={tooShort ? `At least ${MIN_LENGTH} characters` : undefined}
            required
          />
          <PasswordInput
            label="New password again"
            autoComplete="new-password"
            value={confirmPassword}
            onChange={(e) => setConfirmPassword(e.currentTarget.value)}
            error={differs ? 'The two new passwords differ' : undefined}
            required
          />
          {change.isError && <ErrorMessage error={change.error} />}
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button type="submit" disabled={!ready} loading={change.isPending}>
              Change password
            </Button>
          </Group>
        </Stack>
      </form>
    </Dialog>
  )
}
