export type Change = { path: string; kind: 'added' | 'removed' | 'changed'; before?: unknown; after?: unknown }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** What differs between an event's `preData` and `data`, as paths into the objects (arrays compared whole). */
export function diff(before: unknown, after: unknown, path = ''): Change[] {
  // A creation (no preData) lists each field of data as added; a deletion each field of preData as removed.
  if (!path && before == null && isObject(after)) before = {}
  if (!path && after == null && isObject(before)) after = {}
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()
    return keys.flatMap((key) => {
      const at = path ? `${path}.${key}` : key
      if (!(key in before)) return [{ path: at, kind: 'added' as const, after: after[key] }]
      if (!(key in after)) return [{ path: at, kind: 'removed' as const, before: before[key] }]
      return diff(before[key], after[key], at)
    })
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return []
  if (before === undefined || before === null) return [{ path: path || '(all)', kind: 'added', after }]
  if (after === undefined || after === null) return [{ path: path || '(all)', kind: 'removed', before }]
  return [{ path: path || '(all)', kind: 'changed', before, after }]
}
