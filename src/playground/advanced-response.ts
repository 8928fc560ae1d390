import type { FlagEvaluator } from './evaluate.js'

/*
 * The advanced playground's answer can hold 100,000 evaluated flags (100+ MB of JSON). Building it
 * as objects and stringifying them takes seconds; instead it is written as UTF-8 bytes from pieces
 * made once (each flag's name and project, each combination's context, each distinct evaluation)
 * and streamed out one flag at a time, so memory holds a chunk, never the whole document.
 */

const encoder = new TextEncoder()
const json = (value: unknown) => encoder.encode(JSON.stringify(value))
const text = (value: string) => encoder.encode(value)
const CHUNK_BYTES = 1024 * 1024

/** Collects bytes into chunks of about CHUNK_BYTES. */
class ChunkWriter {
  private buffer = new Uint8Array(CHUNK_BYTES)
  private length = 0
  readonly ready: Uint8Array[] = []

  write(bytes: Uint8Array) {
    if (this.length + bytes.length > this.buffer.length) this.flush()
    if (bytes.length > this.buffer.length) {
      this.ready.push(bytes)
      return
    }
    this.buffer.set(bytes, this.length)
    this.length += bytes.length
  }

  flush() {
    if (this.length === 0) return
    this.ready.push(this.buffer.subarray(0, this.length))
    this.buffer = new Uint8Array(CHUNK_BYTES)
    this.length = 0
  }
}

export interface AdvancedEvaluation {
  input: unknown
  environments: { name: string; flags: FlagEvaluator[] }[]
  /** Per combination: what the engine evaluates in each environment (same order as `environments`), and what the response shows. */
  contexts: { evaluations: Parameters<FlagEvaluator['evaluate']>[0][]; shown: Record<string, string> }[]
  warnings?: { invalidContextProperties: string[] }
}

/**
 * `{ input, features: [{ name, projectId, environments: { <env>: [evaluated flag per combination] } }], warnings? }`
 * as a byte stream; each flag's evaluations are made when the consumer asks for more.
 */
export function advancedResponseStream(result: AdvancedEvaluation): ReadableStream<Uint8Array> {
  const shownContexts = result.contexts.map((c) => json(c.shown))
  const flagCount = result.environments[0]?.flags.length ?? 0
  // Each evaluated flag is three copies: its opening (name, environment), its context, and its evaluation (made once per signature, closed with `}`).
  const tails = result.environments.map((env) => env.flags.map((flag) => {
    const project = text(`,"projectId":${JSON.stringify(flag.projectId)},`)
    const cache = new Map<Uint8Array, Uint8Array>()
    return (fragment: Uint8Array) => {
      let tail = cache.get(fragment)
      if (tail === undefined) {
        tail = new Uint8Array(project.length + fragment.length + 1)
        tail.set(project)
        tail.set(fragment, project.length)
        tail[tail.length - 1] = 0x7d // }
        cache.set(fragment, tail)
      }
      return tail
    }
  }))
  let next = 0
  const writer = new ChunkWriter()
  writer.write(text(`{"input":${JSON.stringify(result.input)},"features":[`))

  return new ReadableStream<Uint8Array>({
    pull(controller) {
      while (writer.ready.length === 0 && next <= flagCount) {
        if (next === flagCount) {
          writer.write(text(`]${result.warnings ? `,"warnings":${JSON.stringify(result.warnings)}` : ''}}`))
          writer.flush()
          next++
          break
        }
        const i = next++
        const first = result.environments[0]!.flags[i]!
        writer.write(text(`${i === 0 ? '' : ','}{"name":${JSON.stringify(first.name)},"projectId":${JSON.stringify(first.projectId)},"environments":{`))
        result.environments.forEach((env, e) => {
          const flag = env.flags[i]!
          const tail = tails[e]![i]!
          const opening = `{"name":${JSON.stringify(flag.name)},"environment":${JSON.stringify(env.name)},"context":`
          const firstOpening = text(`${e === 0 ? '' : ','}${JSON.stringify(env.name)}:[${opening}`)
          const nextOpening = text(`,${opening}`)
          for (let c = 0; c < result.contexts.length; c++) {
            writer.write(c === 0 ? firstOpening : nextOpening)
            writer.write(shownContexts[c]!)
            writer.write(tail(flag.fragment(result.contexts[c]!.evaluations[e]!)))
          }
          writer.write(text(result.contexts.length === 0 ? `${e === 0 ? '' : ','}${JSON.stringify(env.name)}:[]` : ']'))
        })
        writer.write(text('}}'))
      }
      for (const chunk of writer.ready.splice(0)) controller.enqueue(chunk)
      if (next > flagCount && writer.ready.length === 0) controller.close()
    },
  })
}
