import { Suspense, useEffect, useState } from 'react'
import type { QueryClient } from '@tanstack/react-query'
import { Loading } from './components/loading'
import { Route, Switch } from 'wouter'
import { NEW_USER_PATH, SIGN_IN_PATH, SIGN_UP_PATH } from './api/client'
import { useMe } from './api/session'
import { Shell } from './components/shell'
import { ErrorMessage } from './components/error-message'
import { lazyPage } from './lazy-page'
import { prefetchProject } from './api/projects'
import { flagListView, flagOfPath, projectOfPath } from './paths'

// Each page is its own chunk: the first load carries only the shell and the sign-in page (see preloadFor).
const SignInPage = lazyPage(() => import('./pages/sign-in'))
const SignUpPage = lazyPage(() => import('./pages/sign-up'))
const NewUserPage = lazyPage(() => import('./pages/new-user'))
const HomePage = lazyPage(() => import('./pages/home'))
const ProjectsPage = lazyPage(() => import('./pages/projects'))
const ProjectPage = lazyPage(() => import('./pages/project'))
const FlagPage = lazyPage(() => import('./pages/flag'))
const ArchivePage = lazyPage(() => import('./pages/archive'))
const EventsPage = lazyPage(() => import('./pages/events'))
const ChangeRequestsPage = lazyPage(() => import('./pages/change-requests'))
const ApprovalsPage = lazyPage(() => import('./pages/approvals'))
const ChangeRequestPage = lazyPage(() => import('./pages/change-request'))
const PlaygroundPage = lazyPage(() => import('./pages/playground'))
const SegmentsPage = lazyPage(() => import('./pages/segments'))
const ContextFieldsPage = lazyPage(() => import('./pages/context-fields'))
const TagTypesPage = lazyPage(() => import('./pages/tag-types'))
const FlagTypesPage = lazyPage(() => import('./pages/flag-types'))
const ApplicationsPage = lazyPage(() => import('./pages/applications'))
const EnvironmentsPage = lazyPage(() => import('./pages/environments'))
const StrategyTypesPage = lazyPage(() => import('./pages/strategy-types'))
const ApiTokensPage = lazyPage(() => import('./pages/api-tokens'))
const PersonalTokensPage = lazyPage(() => import('./pages/personal-tokens'))
const IntegrationsPage = lazyPage(() => import('./pages/integrations'))
const UsersPage = lazyPage(() => import('./pages/users'))
const GroupsPage = lazyPage(() => import('./pages/groups'))
const RolesPage = lazyPage(() => import('./pages/roles'))
const SingleSignOnPage = lazyPage(() => import('./pages/single-sign-on'))
const BannersPage = lazyPage(() => import('./pages/banners'))
const InstanceStatePage = lazyPage(() => import('./pages/instance-state'))
const InviteLinksPage = lazyPage(() => import('./pages/invite-links'))
const ServiceAccountsPage = lazyPage(() => import('./pages/service-accounts'))
const SignalEndpointsPage = lazyPage(() => import('./pages/signal-endpoints'))
const ActionSetsPage = lazyPage(() => import('./pages/action-sets'))
const ProjectApiTokensPage = lazyPage(() => import('./pages/project-api-tokens'))
const ProjectSettingsPage = lazyPage(() => import('./pages/project-settings'))

/**
 * Asks for the page the address names, and for the data it shows first, as the console starts: in parallel with the
 * user and their permissions, rather than the chunk after them and the data after the chunk (the reads themselves were
 * started by early.ts, before this code arrived). The project page and a flag's page, the ones shown with thousands of
 * flags; other pages load as they are rendered.
 */
export function preloadFor(path: string, queryClient: QueryClient) {
  const projectId = projectOfPath(path)
  // A flag's page: its chunk (its data was started by early.ts); the project page's list is not read.
  const page = projectId !== undefined ? ProjectPage : flagOfPath(path) !== undefined ? FlagPage : undefined
  if (page === undefined) return
  const loading: Promise<unknown> = page
    .preload()
    .catch(() => undefined)
    .finally(() => {
      if (startupPage === loading) startupPage = undefined
    })
  startupPage = loading
  if (projectId !== undefined) prefetchProject(queryClient, projectId, flagListView(location.search))
}

/** The chunk of the page asked for at start-up, while it loads (then none): the page waits for it as for the user (see SignedIn). */
let startupPage: Promise<unknown> | undefined

/** Whether `promise` has settled; true at once for none. */
function useSettled(promise: Promise<unknown> | undefined): boolean {
  const [settled, setSettled] = useState(promise === undefined)
  useEffect(() => {
    let mounted = true
    void promise?.then(() => mounted && setSettled(true))
    return () => {
      mounted = false
    }
  }, [promise])
  return settled
}

export function App() {
  return (
    <Suspense fallback={<Loading />}>
      <Switch>
        <Route path={SIGN_IN_PATH} component={SignInPage} />
        <Route path={SIGN_UP_PATH} component={SignUpPage} />
        <Route path={NEW_USER_PATH} component={NewUserPage} />
        <Route>
          <SignedIn />
        </Route>
      </Switch>
    </Suspense>
  )
}

/** Everything behind the sign-in: the shell around the page the path names. */
function SignedIn() {
  const me = useMe()
  // Rendered before its chunk has arrived, the page would suspend, and React shows what suspended no sooner than
  // 300 ms after the fallback: the page asked for at start-up is waited for here instead, as the user is.
  const pageReady = useSettled(startupPage)
  if (me.isPending || !pageReady) return <Loading />
  // A 401 has already sent the browser to the sign-in page (api/client.ts); anything else is shown.
  if (me.isError) return <ErrorMessage error={me.error} />
  return (
    <Shell user={me.data.user}>
      <Suspense fallback={<Loading />}>
        <Switch>
          <Route path="/" component={HomePage} />
          <Route path="/projects" component={ProjectsPage} />
          <Route path="/projects/:projectId">{(params) => <ProjectPage projectId={params.projectId} />}</Route>
          <Route path="/projects/:projectId/flags/:flagName">{(params) => <FlagPage projectId={params.projectId} flagName={params.flagName} />}</Route>
          <Route path="/projects/:projectId/archive">{(params) => <ArchivePage projectId={params.projectId} />}</Route>
          <Route path="/projects/:projectId/context-fields">{(params) => <ContextFieldsPage projectId={params.projectId} />}</Route>
          <Route path="/projects/:projectId/actions">{(params) => <ActionSetsPage projectId={params.projectId} />}</Route>
          <Route path="/projects/:projectId/api-tokens">{(params) => <ProjectApiTokensPage projectId={params.projectId} />}</Route>
          <Route path="/projects/:projectId/settings">{(params) => <ProjectSettingsPage projectId={params.projectId} />}</Route>
          <Route path="/projects/:projectId/change-requests">{(params) => <ChangeRequestsPage projectId={params.projectId} />}</Route>
          <Route path="/projects/:projectId/change-requests/:id">{(params) => <ChangeRequestPage projectId={params.projectId} id={params.id} />}</Route>
          <Route path="/approvals" component={ApprovalsPage} />
          <Route path="/events" component={EventsPage} />
          <Route path="/playground" component={PlaygroundPage} />
          <Route path="/segments" component={SegmentsPage} />
          <Route path="/context-fields">{() => <ContextFieldsPage />}</Route>
          <Route path="/tag-types" component={TagTypesPage} />
          <Route path="/flag-types" component={FlagTypesPage} />
          <Route path="/applications" component={ApplicationsPage} />
          <Route path="/environments" component={EnvironmentsPage} />
          <Route path="/strategy-types" component={StrategyTypesPage} />
          <Route path="/api-tokens" component={ApiTokensPage} />
          <Route path="/personal-tokens" component={PersonalTokensPage} />
          <Route path="/integrations" component={IntegrationsPage} />
          <Route path="/users" component={UsersPage} />
          <Route path="/groups" component={GroupsPage} />
          <Route path="/roles" component={RolesPage} />
          <Route path="/single-sign-on" component={SingleSignOnPage} />
          <Route path="/banners" component={BannersPage} />
          <Route path="/instance-state" component={InstanceStatePage} />
          <Route path="/invite-links" component={InviteLinksPage} />
          <Route path="/service-accounts" component={ServiceAccountsPage} />
          <Route path="/signal-endpoints" component={SignalEndpointsPage} />
          <Route>
            <ErrorMessage error={new Error('There is no page at this address.')} title="Not found" />
          </Route>
        </Switch>
      </Suspense>
    </Shell>
  )
}
