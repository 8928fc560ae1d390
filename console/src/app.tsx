import { lazy, Suspense } from 'react'
import { Loading } from './components/loading'
import { Route, Switch } from 'wouter'
import { SIGN_IN_PATH, SIGN_UP_PATH } from './api/client'
import { useMe } from './api/session'
import { Shell } from './components/shell'
import { ErrorMessage } from './components/error-message'

// Each page is its own chunk: the first load carries only the shell and the sign-in page.
const SignInPage = lazy(() => import('./pages/sign-in'))
const SignUpPage = lazy(() => import('./pages/sign-up'))
const HomePage = lazy(() => import('./pages/home'))
const ProjectsPage = lazy(() => import('./pages/projects'))
const ProjectPage = lazy(() => import('./pages/project'))
const FlagPage = lazy(() => import('./pages/flag'))
const ArchivePage = lazy(() => import('./pages/archive'))
const EventsPage = lazy(() => import('./pages/events'))
const ChangeRequestsPage = lazy(() => import('./pages/change-requests'))
const ChangeRequestPage = lazy(() => import('./pages/change-request'))
const PlaygroundPage = lazy(() => import('./pages/playground'))
const SegmentsPage = lazy(() => import('./pages/segments'))
const ContextFieldsPage = lazy(() => import('./pages/context-fields'))
const TagTypesPage = lazy(() => import('./pages/tag-types'))
const FlagTypesPage = lazy(() => import('./pages/flag-types'))
const EnvironmentsPage = lazy(() => import('./pages/environments'))
const StrategyTypesPage = lazy(() => import('./pages/strategy-types'))
const ApiTokensPage = lazy(() => import('./pages/api-tokens'))
const PersonalTokensPage = lazy(() => import('./pages/personal-tokens'))
const IntegrationsPage = lazy(() => import('./pages/integrations'))
const UsersPage = lazy(() => import('./pages/users'))
const GroupsPage = lazy(() => import('./pages/groups'))
const RolesPage = lazy(() => import('./pages/roles'))
const SingleSignOnPage = lazy(() => import('./pages/single-sign-on'))
const BannersPage = lazy(() => import('./pages/banners'))
const InstanceStatePage = lazy(() => import('./pages/instance-state'))
const InviteLinksPage = lazy(() => import('./pages/invite-links'))
const ServiceAccountsPage = lazy(() => import('./pages/service-accounts'))
const SignalEndpointsPage = lazy(() => import('./pages/signal-endpoints'))
const ActionSetsPage = lazy(() => import('./pages/action-sets'))

export function App() {
  return (
    <Suspense fallback={<Loading />}>
      <Switch>
        <Route path={SIGN_IN_PATH} component={SignInPage} />
        <Route path={SIGN_UP_PATH} component={SignUpPage} />
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
  if (me.isPending) return <Loading />
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
          <Route path="/projects/:projectId/change-requests">{(params) => <ChangeRequestsPage projectId={params.projectId} />}</Route>
          <Route path="/projects/:projectId/change-requests/:id">{(params) => <ChangeRequestPage projectId={params.projectId} id={params.id} />}</Route>
          <Route path="/events" component={EventsPage} />
          <Route path="/playground" component={PlaygroundPage} />
          <Route path="/segments" component={SegmentsPage} />
          <Route path="/context-fields">{() => <ContextFieldsPage />}</Route>
          <Route path="/tag-types" component={TagTypesPage} />
          <Route path="/flag-types" component={FlagTypesPage} />
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
