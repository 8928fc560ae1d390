import { buildConsoleIfChanged } from '../../scripts/console-build.js'

const shared = globalThis as { flagpostConsoleBuild?: Promise<void> }

/**
 * `npm test` builds the web console itself: the server, the worker's assets and the browser tests serve it.
 * Both test projects list this setup; they share one build (through globalThis, whatever module instance runs).
 */
export default async function setup() {
  shared.flagpostConsoleBuild ??= buildConsoleIfChanged()
  await shared.flagpostConsoleBuild
}
