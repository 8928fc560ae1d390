/**
 * Runs `build` for `key`, or joins the build of the same key already under way where requests may wait
 * on each other's work (`share`: on Node; on Workers a promise of another request may never settle).
 */
export function buildOnce<T>(building: Map<string, Promise<T>>, key: string, share: boolean, build: () => Promise<T>): Promise<T> {
  if (!share) return build()
  let pending = building.get(key)
  if (!pending) {
    pending = build().finally(() => building.delete(key))
    building.set(key, pending)
  }
  return pending
}
