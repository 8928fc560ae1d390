/*
 * RFC 6902 JSON Patch on plain JSON documents, all operations, as fast-json-patch's `applyPatch(doc, ops, validate)`
 * applied them here before (a few lines instead of a library in the worker's bundle). Any failure throws
 * JsonPatchFailure, naming the operation's index; the document given is never changed.
 */

export class JsonPatchFailure extends Error {
  constructor(
    message: string,
    readonly index: number,
  ) {
    super(message)
  }
}

interface Operation {
  op: 'add' | 'remove' | 'replace' | 'copy' | 'move' | 'test'
  path: string
  from?: string
  value?: unknown
}

type Container = Record<string, unknown> | unknown[]

/** The reference tokens of a JSON Pointer (RFC 6901). */
function tokensOf(pointer: string): string[] {
  if (pointer === '') return []
  if (!pointer.startsWith('/')) throw new Error(`"${pointer}" is not a JSON Pointer (it must start with /)`)
  return pointer
    .slice(1)
    .split('/')
    .map((token) => {
      // Changing an object's prototype is never a JSON change.
      if (token === '__proto__' || token === 'constructor' || token === 'prototype') throw new Error(`"${token}" cannot be patched`)
      return token.replace(/~1/g, '/').replace(/~0/g, '~')
    })
}

const isContainer = (value: unknown): value is Container => typeof value === 'object' && value !== null

/** An array index token: `-` (past the end, when allowed) or a canonical non-negative integer within the bounds. */
function indexIn(array: unknown[], token: string, { end }: { end: boolean }): number {
  if (token === '-' && end) return array.length
  if (!/^(0|[1-9]\d*)$/.test(token)) throw new Error(`"${token}" is not an array index`)
  const index = Number(token)
  if (index > array.length || (!end && index === array.length)) throw new Error(`index ${index} is out of bounds`)
  return index
}

function childOf(container: unknown, token: string): unknown {
  if (Array.isArray(container)) return container[indexIn(container, token, { end: false })]
  if (isContainer(container) && Object.hasOwn(container, token)) return (container as Record<string, unknown>)[token]
  throw new Error(`no value at "${token}"`)
}

/** The container a pointer's last token is in, and that token. */
function parentOf(document: unknown, pointer: string): { parent: Container; key: string } {
  const tokens = tokensOf(pointer)
  const key = tokens.pop()!
  let parent = document
  for (const token of tokens) parent = childOf(parent, token)
  if (!isContainer(parent)) throw new Error(`no object or array at "${pointer}"`)
  return { parent, key }
}

const get = (document: unknown, pointer: string) => tokensOf(pointer).reduce(childOf, document)

function add(document: unknown, pointer: string, value: unknown): unknown {
  if (pointer === '') return value
  const { parent, key } = parentOf(document, pointer)
  if (Array.isArray(parent)) parent.splice(indexIn(parent, key, { end: true }), 0, value)
  else parent[key] = value
  return document
}

function remove(document: unknown, pointer: string): unknown {
  if (pointer === '') throw new Error('the whole document cannot be removed')
  const { parent, key } = parentOf(document, pointer)
  const removed = childOf(parent, key)
  if (Array.isArray(parent)) parent.splice(indexIn(parent, key, { end: false }), 1)
  else delete parent[key]
  return removed
}

/** Structural equality of JSON values (object keys in any order). */
function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (!isContainer(a) || !isContainer(b) || Array.isArray(a) !== Array.isArray(b)) return false
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && equal((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}

/** The patched copy of `document`. */
export function applyPatch(document: unknown, operations: readonly Operation[]): unknown {
  let result = structuredClone(document)
  operations.forEach((operation, index) => {
    try {
      const { op, path } = operation
      if (op === 'add') result = add(result, path, structuredClone(operation.value))
      else if (op === 'remove') remove(result, path)
      else if (op === 'replace') {
        if (path === '') result = structuredClone(operation.value)
        else {
          get(result, path)
          const { parent, key } = parentOf(result, path)
          if (Array.isArray(parent)) parent[indexIn(parent, key, { end: false })] = structuredClone(operation.value)
          else parent[key] = structuredClone(operation.value)
        }
      } else if (op === 'test') {
        if (!equal(get(result, path), operation.value)) throw new Error('a test operation failed')
      } else {
        const from = operation.from ?? ''
        if (op === 'move') {
          if (path.startsWith(`${from}/`)) throw new Error('a value cannot be moved into itself')
          if (from !== path) result = add(result, path, remove(result, from))
        } else result = add(result, path, structuredClone(get(result, from)))
      }
    } catch (error) {
      throw new JsonPatchFailure(error instanceof Error ? error.message : String(error), index)
    }
  })
  return result
}
