import type { Db } from '../../src/db.js'

/**
 * The database as an optimistic write sees it: right after its first read (`select`, `execute` or a statement
 * built once),
 * `meanwhile` runs — another writer changing the flag between the read and the write.
 */
export function racing(db: Db, meanwhile: () => Promise<unknown>) {
  const state = { raced: false }
  function afterRead(builder: object): object {
    return new Proxy(builder, {
      get(target, key) {
        const value = Reflect.get(target, key)
        if (key === 'then')
          return (resolve: (rows: unknown) => unknown, reject: (e: unknown) => unknown) =>
            (target as PromiseLike<unknown>)
              .then(async (rows) => {
                // Reads sent together (`together`) are one read: the other writer comes in once.
                if (state.raced) return rows
                state.raced = true
                await meanwhile()
                return rows
              })
              .then(resolve, reject)
        if (typeof value !== 'function') return value
        return (...args: unknown[]) => {
          const result = (value as (...a: unknown[]) => unknown).apply(target, args)
          return typeof result === 'object' && result !== null && 'then' in result ? afterRead(result) : result
        }
      },
    })
  }
  // Statements built once (src/db.ts `statement`) run through the session's prepared queries.
  const session = (real: object) =>
    new Proxy(real, {
      get(target, key) {
        const value = Reflect.get(target, key)
        if (key !== 'prepareQuery' || state.raced) return typeof value === 'function' ? value.bind(target) : value
        return (...args: unknown[]) => afterRead((value as (...a: unknown[]) => object).apply(target, args))
      },
    })
  const raced = new Proxy(db, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver)
      if (key === 'session' && !state.raced) return session(value as object)
      if ((key !== 'select' && key !== 'execute') || state.raced) return typeof value === 'function' ? value.bind(target) : value
      return (...args: unknown[]) => afterRead((value as (...a: unknown[]) => object).apply(target, args))
    },
  })
  return { db: raced, state }
}
