import { Menu } from '@mantine/core'
import { AccountButton } from './account-button'

/** The account's menu: who is signed in, change password, sign out. Opened at once when asked for before it loaded. */
export function UserMenu(props: { name: string; signedInAs: string; defaultOpened: boolean; onChangePassword: () => void; onSignOut: () => void }) {
  return (
    <Menu position="bottom-end" withinPortal defaultOpened={props.defaultOpened}>
      <Menu.Target>
        <AccountButton name={props.name} />
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>Signed in as {props.signedInAs}</Menu.Label>
        <Menu.Item onClick={props.onChangePassword}>Change password</Menu.Item>
        <Menu.Item onClick={props.onSignOut}>Sign out</Menu.Item>
      </Menu.Dropdown>
    </Menu>
  )
}
