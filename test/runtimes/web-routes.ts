// The routes every runtime's server answers (Bun.serve, Deno.serve, workerd, and Node in-process): one promise reader
// each, on the Web Request the runtime hands over, answering JSON `{ value }` or the error's `{ status, type, message }`.
// `/drawn/<kind>` reads with the options the request carries, for drawn-bodies.test.ts.
import { Buffer } from 'node:buffer'
import type * as bodykitEntry from '../../src/index'

/** The readers of bodykit's default entry, as each runtime loads `dist/index.js`. */
export type Readers = Pick<typeof bodykitEntry, 'readJson' | 'readText' | 'readRaw' | 'readUrlencoded' | 'readMultipart'>

type Route = '/json' | '/text' | '/raw' | '/urlencoded' | '/multipart'

/** The readers' options, one object each so that they are validated once. */
export const ROUTE_OPTIONS = {
  '/json': { limit: '1kb' },
  '/text': { limit: '64kb' },
  '/raw': { limit: '64kb' },
  '/urlencoded': { limit: '64kb', extended: true },
  '/multipart': { limit: '256kb', files: { storage: 'memory', fileSizeLimit: '64kb', fileLimit: 2 } }
} as const satisfies Record<Route, object>

type AnyReader = (request: Request, options: object) => Promise<unknown>

/** Test-only: the reader options a `/drawn/<kind>` request carries, as JSON. */
export const OPTIONS_HEADER = 'x-bodykit-options'

/** A handler `(request) => Response` over bodykit's readers; `/runtime` names the runtime that answers. */
export function createHandler (bodykit: Readers, runtime: string): (request: Request) => Promise<Response> {
  const readers: Record<Route, AnyReader> = {
    '/json': bodykit.readJson as AnyReader,
    '/text': bodykit.readText as AnyReader,
    '/raw': bodykit.readRaw as AnyReader,
    '/urlencoded': bodykit.readUrlencoded as AnyReader,
    '/multipart': bodykit.readMultipart as AnyReader
  }
  return async function handle (request) {
    const path = new URL(request.url).pathname
    if (path === '/runtime') return answer(200, { value: runtime })
    const drawn = path.startsWith('/drawn/') ? '/' + path.slice('/drawn/'.length) : null
    if (drawn !== null && drawn in readers) {
      const options = JSON.parse(request.headers.get(OPTIONS_HEADER) ?? '{}') as object
      const { status, body } = await outcomeOf(() => readers[drawn as Route](request, options))
      return answer(status, body)
    }
    if (!(path in readers)) return answer(404, { status: 404, type: 'route.not.found', message: path })
    const { status, body } = await outcomeOf(() => readers[path as Route](request, ROUTE_OPTIONS[path as Route]))
    return answer(status, body)
  }
}

/** What a reading answers, on any runtime and from any request: `{ value }`, or the error's fields, with its status. */
export async function outcomeOf (read: () => Promise<unknown>): Promise<{ status: number, body: unknown }> {
  try {
    return { status: 200, body: { value: encodeValue(await read()) } }
  } catch (err) {
    const e = (err ?? {}) as { status?: unknown, type?: unknown, message?: unknown, limit?: unknown, name?: unknown, stack?: unknown }
    const status = typeof e.status === 'number' ? e.status : 500
    // A failure that is not bodykit's (a module the runtime lacks, a TypeError) carries its name and stack to the test.
    const detail = typeof e.type === 'string' ? {} : { name: String(e.name), stack: String(e.stack) }
    return { status, body: { status, type: e.type ?? null, message: String(e.message), limit: e.limit ?? null, ...detail } }
  }
}

function answer (status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })
}

/** A value as JSON carries it the same on every runtime: bytes as base64, each file with its bytes. */
function encodeValue (value: unknown): unknown {
  if (value === undefined) return { undefined: true }
  if (value instanceof Uint8Array) return { base64: Buffer.from(value).toString('base64') }
  const form = value as { fields?: unknown, files?: Array<{ buffer?: Uint8Array }> } | null
  if (form !== null && typeof form === 'object' && Array.isArray(form.files)) {
    return {
      fields: form.fields,
      files: form.files.map(({ buffer, ...file }) => ({ ...file, base64: buffer === undefined ? null : Buffer.from(buffer).toString('base64') }))
    }
  }
  return value
}
