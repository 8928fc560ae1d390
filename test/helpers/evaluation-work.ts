import { expect } from 'vitest'
import { regexWorkDone } from '../../src/evaluation/index.js'
import type { TestApp } from './app.js'

/*
 * What the tests of evaluation cost share (security-evaluation-*, security-regex-work): they prove a request's cost by
 * counting the steps its meter draws (regexWorkDone), not by timing.
 */

/**
 * A caller of the test app `app()` (read when called: the app is made in a beforeAll) with its admin token: the
 * answer's body; a status of 300 or more fails the test, naming the request and the start of the answer.
 */
export function okCaller(app: () => TestApp) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await app().call(method, path, { body })
    expect(res.status, `${method} ${path}: ${res.text.slice(0, 300)}`).toBeLessThan(300)
    return res.body
  }
}

/** The work (matching steps) `request` made the server do, and its answer. */
export async function counted<T>(request: () => Promise<T>): Promise<{ work: number; res: T }> {
  const before = regexWorkDone()
  const res = await request()
  return { work: regexWorkDone() - before, res }
}

/** The answer of a request refused for drawing more than `budget` matching steps. */
export const budgetSpent = (budget: number) => ({
  status: 400,
  body: { id: expect.any(String), name: 'ValidationError', message: expect.stringContaining(`more than ${budget} matching steps, the limit per request`) },
})
