import type { FlagEvaluator } from './evaluate.js'

/*
 * The advanced playground's answer can hold 100,000 evaluated flags (100+ MB of JSON). Building it
 * as objects and stringifying them takes seconds; instead it is written as UTF-8 bytes from pieces
 * made once (each flag's name and project, each combination's context, each distinct evaluation)
 * and streamed out one flag at a time, so memory holds a chunk, never the whole document.
 */

const encoder = new TextEncoder()
const text = (value: string) => encoder.encode(value)
const CHUNK_BYTES = 1024 * 1024
const MIN_CHUNK_BYTES = 16 * 1024

/**
 * Collects bytes into chunks of at most CHUNK_BYTES. A chunk is allocated when the first byte is
 * written to it, as large as the caller expects the rest of the document to be (within bounds):
 * allocating (zeroing) whole chunks that end up holding a few bytes, or none, showed in profiles.
 */
class ChunkWriter {
  private buffer: Uint8Array | undefined
  private length = 0
  /** Bytes written so far, flushed or not. */
  written = 0
  /** How many more bytes the caller expects: the size of the next chunk allocated. */
  expected = MIN_CHUNK_BYTES
  readonly ready: Uint8Array[] = []

  write(bytes: Uint8Array) {
    this.written += bytes.length
    let buffer = this.buffer
    if (buffer !== undefined && this.length + bytes.length > buffer.length) {
      this.flush()
      buffer = undefined
    }
    if (buffer === undefined) {
      if (bytes.length >= CHUNK_BYTES) {
        this.ready.push(bytes)
        return
      }
      buffer = this.buffer = new Uint8Array(Math.min(CHUNK_BYTES, Math.max(MIN_CHUNK_BYTES, this.expected, bytes.length)))
    }
    buffer.set(bytes, this.length)
    this.length += bytes.length
  }

  /** One byte (`,`, `]`…): not worth a copy of an array. */
  byte(value: number) {
    if (this.buffer === undefined || this.length === this.buffer.length) {
      this.flush()
      this.buffer = new Uint8Array(Math.min(CHUNK_BYTES, Math.max(MIN_CHUNK_BYTES, this.expected)))
    }
    this.buffer[this.length++] = value
    this.written++
  }

  flush() {
    if (this.buffer === undefined || this.length === 0) return
    this.ready.push(this.buffer.subarray(0, this.length))
    this.buffer = undefined
    this.length = 0
  }
}

/**
 * One environment's evaluators with the bytes the response writes around their evaluations: made
 * when the evaluators are prepared, so a request whose evaluators are kept encodes none of it.
 */
export interface ResponseEnvironment {
  name: string
  flags: FlagEvaluator[]
  /** `"<environment>":[` */
  key: Uint8Array
  /** Per flag, what opens it in the `features` list (the first environment's are written): `{"name":…,"projectId":…,"environments":{` */
  headers: Uint8Array[]
  /** Per flag, what opens each of its evaluations: `{"name":…,"environment":…,"context":` */
  openings: Uint8Array[]
}

export function responseEnvironment(name: string, flags: FlagEvaluator[]): ResponseEnvironment {
  const env = JSON.stringify(name)
  return {
    name,
    flags,
    key: text(`${env}:[`),
    headers: flags.map((flag) => text(`{"name":${JSON.stringify(flag.name)},"projectId":${JSON.stringify(flag.projectId)},"environments":{`)),
    openings: flags.map((flag) => text(`{"name":${JSON.stringify(flag.name)},"environment":${env},"context":`)),
  }
}

export interface AdvancedEvaluation {
  input: unknown
  environments: ResponseEnvironment[]
  /** Per combination, the context the response shows (properties flattened in), as JSON. */
  shown: Uint8Array[]
  /**
   * Every evaluation as the response writes it after its context (see FlagEvaluator.fragment), made before the
   * response starts: per flag, per environment, per combination.
   */
  evaluations: Uint8Array[]
  warnings?: { invalidContextProperties: string[] }
}

const COMMA = 0x2c
const CLOSE_ARRAY = 0x5d
const CLOSE_OBJECT = 0x7d

/**
 * `{ input, features: [{ name, projectId, environments: { <env>: [evaluated flag per combination] } }], warnings? }`
 * as a byte stream, written a flag at a time when the consumer asks for more. Each evaluated flag is written from three
 * pieces: its opening (name, environment), its context, and the rest (project, evaluation), made before the stream.
 */
export function advancedResponseStream(result: AdvancedEvaluation): ReadableStream<Uint8Array> {
  const shownContexts = result.shown
  const environments = result.environments
  const flagCount = environments[0]?.flags.length ?? 0
  const evaluations = result.evaluations
  let at = 0
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
        if (i > 0) writer.byte(COMMA)
        writer.write(environments[0]!.headers[i]!)
        for (let e = 0; e < environments.length; e++) {
          const env = environments[e]!
          const opening = env.openings[i]!
          if (e > 0) writer.byte(COMMA)
          writer.write(env.key)
          for (let c = 0; c < shownContexts.length; c++) {
            if (c > 0) writer.byte(COMMA)
            writer.write(opening)
            writer.write(shownContexts[c]!)
            writer.write(evaluations[at++]!)
          }
          writer.byte(CLOSE_ARRAY)
        }
        writer.byte(CLOSE_OBJECT)
        writer.byte(CLOSE_OBJECT)
        // The rest of the document will be about as large per flag as what is written so far.
        writer.expected = Math.ceil((writer.written / next) * (flagCount - next) * 1.1) + 256
      }
      for (const chunk of writer.ready.splice(0)) controller.enqueue(chunk)
      if (next > flagCount && writer.ready.length === 0) controller.close()
    },
  })
}
