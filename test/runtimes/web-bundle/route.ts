// What every runtime runs around the Web bundle (edge-runtime, workerd without nodejs_compat, Deno, Bun) and Node runs around
// the Node build: a reader's outcome as JSON, an HTTP handler, and a driver that builds a Request from a spec in the runtime itself.
// Web primitives only (no Buffer, no node: import): it is bundled into a worker that has none.

/** The readers either build exports; the Web bundle's and src/readers.ts's have the same names. */
export interface Readers {
  readJson: AnyReader
  readText: AnyReader
  readRaw: AnyReader
  readUrlencoded: AnyReader
  readMultipart: AnyReader
}
type AnyReader = (request: never, options?: never) => Promise<unknown>
export type Kind = 'json' | 'text' | 'raw' | 'urlencoded' | 'multipart'

/** The reader options a `/read/<kind>` request carries, as JSON (test-only). */
export const OPTIONS_HEADER = 'x-bodykit-options'

/** A reading's answer, the same shape from every runtime: `{ value }` or `{ error: { status, type, message, ... } }`. */
export interface Outcome { status: number, body: { value: unknown } | { error: Record<string, unknown> } }

/**
 * A request built inside the runtime: its headers and a body of pieces (base64), then, when `endless` is set, pieces of
 * that many bytes without end; or a body whose first byte never comes; or none.
 */
export interface Spec {
  kind: Kind
  headers: Record<string, string>
  body: { chunks: string[], endless?: number } | { never: true } | null
  options: unknown
}

/** What the driver gives back: the outcome, and what the body's producer saw (bytes pulled, cancelled or not). */
export interface Driven { outcome: Outcome, producer: { pulled: number, cancelled: boolean } }

function readerOf (readers: Readers, kind: Kind): (request: unknown, options: unknown) => Promise<unknown> {
  const name = `read${kind === 'urlencoded' ? 'Urlencoded' : kind[0].toUpperCase() + kind.slice(1)}` as keyof Readers
  return readers[name] as (request: unknown, options: unknown) => Promise<unknown>
}

/** Reads with the reader of `kind` and describes the result. */
export async function outcomeOf (readers: Readers, kind: Kind, request: unknown, options: unknown): Promise<Outcome> {
  try {
    return { status: 200, body: { value: encode(await readerOf(readers, kind)(request, options)) } }
  } catch (err) {
    const error = describeError(err)
    return { status: typeof error.status === 'number' ? error.status : 500, body: { error } }
  }
}

/** An error's name, message and every own property but the stack (kept apart: its frames are the runtime's). */
function describeError (err: unknown): Record<string, unknown> {
  if (err === null || typeof err !== 'object') return { thrown: String(err) }
  const e = err as Record<string, unknown>
  // http-errors puts status, statusCode and expose on the class's prototype: read, not listed.
  const described: Record<string, unknown> = { name: String(e.name), message: String(e.message), status: e.status, statusCode: e.statusCode, expose: e.expose }
  for (const key of Object.keys(e)) if (key !== 'stack') described[key] = encode(e[key])
  // Not bodykit's (no type): the stack tells where, for the failure message only.
  if (typeof e.type !== 'string') described.stack = String(e.stack)
  return described
}

/** A value as JSON carries it the same everywhere: bytes as base64 (a Buffer is a Uint8Array), errors by name and message. */
function encode (value: unknown): unknown {
  if (value === undefined) return { undefined: true }
  if (value instanceof Uint8Array || (ArrayBuffer.isView(value) && Object.prototype.toString.call(value) === '[object Uint8Array]')) return { base64: toBase64(value as Uint8Array) }
  if (value instanceof Error) return { name: value.name, message: value.message }
  if (Array.isArray(value)) return value.map(encode)
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, encode(field)]))
  return value
}

function toBase64 (bytes: Uint8Array): string {
  let binary = ''
  // In slices: String.fromCharCode takes its arguments on the stack.
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000))
  return btoa(binary)
}

function fromBase64 (text: string): Uint8Array {
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

/** The DecompressionStream formats this runtime constructs, by bodykit's Content-Encoding name ('br' is 'brotli'). */
export function decompressionFormats (): string[] {
  const formats: string[] = []
  for (const [encoding, format] of [['gzip', 'gzip'], ['deflate', 'deflate'], ['br', 'brotli'], ['zstd', 'zstd']]) {
    try {
      new DecompressionStream(format as 'gzip')
      formats.push(encoding)
    } catch {
      // Absent (edge-runtime has no DecompressionStream at all).
    }
  }
  return formats
}

/**
 * Builds the spec's Request with this runtime's own primitives and reads it. The body's producer counts what it
 * gave and whether it was cancelled: a refused body must be cancelled, so that the runtime stops reading the upload.
 */
export async function drive (readers: Readers, spec: Spec): Promise<Driven> {
  const producer = { pulled: 0, cancelled: false }
  const pieces = spec.body !== null && 'chunks' in spec.body ? spec.body.chunks.map(fromBase64) : []
  const body = spec.body === null
    ? null
    : new ReadableStream<Uint8Array>({
      pull (controller) {
        const source = spec.body as NonNullable<Spec['body']>
        if ('never' in source) return new Promise<void>(() => {})
        const chunk = pieces.shift() ?? (source.endless === undefined ? undefined : new Uint8Array(source.endless).fill(97))
        if (chunk === undefined) return controller.close()
        producer.pulled += chunk.byteLength
        controller.enqueue(chunk)
      },
      cancel () { producer.cancelled = true }
    })
  const init = { method: 'POST', headers: spec.headers, body, duplex: 'half' }
  const outcome = await outcomeOf(readers, spec.kind, new Request('http://127.0.0.1/driven', init as RequestInit), spec.options)
  // A cancel is seen by the producer a turn or two after the reader is cancelled.
  await new Promise((resolve) => setTimeout(resolve, 0))
  return { outcome, producer }
}

/**
 * The HTTP handler of the runtimes that serve: `GET /runtime` (name and formats), `POST /read/<kind>` (the reader on
 * the Request the runtime's server made from the wire, with the options in OPTIONS_HEADER) and `POST /drive` (a Spec
 * as JSON, read by `drive`).
 */
export function createHandler (readers: Readers, runtime: string): (request: Request) => Promise<Response> {
  return async function handle (request) {
    const path = new URL(request.url).pathname
    if (path === '/runtime') return Response.json({ runtime, formats: decompressionFormats() })
    if (path === '/drive') return Response.json(await drive(readers, await request.json() as Spec))
    if (path.startsWith('/read/')) {
      const options = JSON.parse(request.headers.get(OPTIONS_HEADER) ?? '{}') as unknown
      const outcome = await outcomeOf(readers, path.slice('/read/'.length) as Kind, request, options)
      return Response.json(outcome.body, { status: outcome.status })
    }
    return Response.json({ error: { status: 404, message: path } }, { status: 404 })
  }
}
