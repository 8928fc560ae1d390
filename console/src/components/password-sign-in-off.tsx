import { Alert, Text } from '@mantine/core'
import { Link } from 'wouter'
import { ApiError, SIGN_IN_PATH } from '../api/client'

/**
 * Whether a link's check was refused because password sign-in is switched off (single sign-on only): the server answers
 * a sign-up or set-password link 403 then, whatever the link (a password set with it could not be used).
 */
export const passwordSignInOff = (error: unknown): error is ApiError => error instanceof ApiError && error.status === 403

/** What the sign-up and set-password pages show in place of their form while password sign-in is switched off. */
export function PasswordSignInOff({ error }: { error: ApiError }) {
  return (
    <>
      <Alert color="red" title="Password sign-in is switched off" role="alert">
        {error.message}
      </Alert>
      <Text size="sm">
        <Link href={SIGN_IN_PATH}>Go to the sign-in page</Link> to sign in with single sign-on.
      </Text>
    </>
  )
}
