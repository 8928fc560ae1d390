import { readFileSync } from 'node:fs'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * Starts the longest test files first, so that the last to start are short and both workers end together (a 70 s
 * browser file started last was the suite's tail). Vitest without a cache (a clean clone, CI) orders by file size;
 * the time of each file comes instead from test/file-durations.txt (`<ms> <file>` a line, from a run on two cores);
 * a file not listed counts as a median one. Projects stay together (a non-isolated project's runner is reused only
 * by the next file of the same project): workerd's long files first, then node, then node-isolated's few.
 */
const PROJECT_ORDER = ['workerd', 'node', 'node-isolated']
const UNLISTED_MS = 5_000

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = new Map<string, number>()
    for (const line of readFileSync(new URL('../file-durations.txt', import.meta.url), 'utf8').split('\n')) {
      const [ms, file] = line.trim().split(/\s+/)
      if (file) durations.set(file, Number(ms))
    }
    const root = this.ctx.config.root
    const timeOf = (spec: TestSpecification) => durations.get(spec.moduleId.slice(root.length + 1)) ?? UNLISTED_MS
    const rank = (spec: TestSpecification) => {
      const at = PROJECT_ORDER.indexOf(spec.project.name)
      return at === -1 ? PROJECT_ORDER.length : at
    }
    return [...files].sort((a, b) => rank(a) - rank(b) || timeOf(b) - timeOf(a))
  }
}
