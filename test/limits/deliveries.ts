// One body, several deliveries (issue 45): the pieces it arrives in, a Node stream or a Web Request, with or without
// Content-Length, and for bodykit/multer the whole-form path or the streaming one. Each delivery's answer, comparable.
import type { IncomingMessage, ServerResponse } from 'node:http'
import bodykit from '../../src/index'
import bodykitMulter from '../../src/multer'
import { nodeRequest, runMiddleware, runReader, splitAt, turn, webRequest, type Answer, type Wire } from '../fuzz/targets/harness'

export type ReaderKind = 'json' | 'text' | 'urlencoded' | 'multipart'
type AnyReader = (req: unknown, options: object) => Promise<unknown>
export const READERS: Record<ReaderKind, AnyReader> = {
  json: bodykit.readJson as AnyReader,
  text: bodykit.readText as AnyReader,
  urlencoded: bodykit.readUrlencoded as AnyReader,
  multipart: bodykit.readMultipart as AnyReader
}

/** How one delivery brings the body: its source, the pieces, and whether Content-Length is sent. */
export interface Delivery {
  readonly name: string
  readonly source: 'node' | 'web' | 'web-bytes'
  readonly pieces: 'whole' | 'split' | 'bytes'
  readonly length: boolean
  readonly chunks: Buffer[]
}

/** Every delivery of `body`: whole, in the drawn pieces and a byte at a time; Node stream, Web stream, Web bytes; with and without Content-Length. */
export function deliveriesOf (body: Buffer, splits: readonly number[], sources: ReadonlyArray<Delivery['source']> = ['node', 'web', 'web-bytes']): Delivery[] {
  const cuts: Array<[Delivery['pieces'], Buffer[]]> = [['whole', [body]], ['split', splitAt(body, splits)], ['bytes', splitAt(body, Array.from(body.keys()))]]
  const deliveries: Delivery[] = []
  for (const source of sources) {
    for (const length of [false, true]) {
      for (const [pieces, chunks] of cuts) {
        // A Request made of bytes arrives as the runtime gives it: one delivery each way.
        if (source === 'web-bytes' && pieces !== 'whole') continue
        deliveries.push({ name: `${source}, ${pieces}, ${length ? 'Content-Length' : 'chunked'}`, source, pieces, length, chunks })
      }
    }
  }
  return deliveries
}

/** The headers of a delivery: Content-Length, or (a Node stream) Transfer-Encoding: chunked. */
function wireOf (delivery: Delivery, headers: Record<string, string>, length: number): Wire {
  const framing: Record<string, string> = delivery.length
    ? { 'content-length': String(length) }
    : delivery.source === 'node' ? { 'transfer-encoding': 'chunked' } : {}
  return { headers: { ...headers, ...framing }, chunks: delivery.chunks }
}

/** A reader's answer for one delivery: its value, or its error's status, type and message. */
export async function readerAnswer (kind: ReaderKind, options: object, headers: Record<string, string>, delivery: Delivery): Promise<Answer> {
  const length = delivery.chunks.reduce((sum, chunk) => sum + chunk.length, 0)
  const wire = wireOf(delivery, headers, length)
  const read = READERS[kind]
  if (delivery.source === 'node') {
    const { req, written } = nodeRequest(wire)
    return await runReader(() => read(req, options), written, delivery.name)
  }
  const request = webRequest(wire, delivery.source === 'web-bytes')
  return await runReader(() => read(request, options), turn(), delivery.name)
}

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void

/** bodykit/multer's options in the example: memory storage, an async fileFilter that accepts, defCharset latin1. */
export function multerMiddleware (limits: Record<string, number>, asyncFilter = true): Middleware {
  const fileFilter = asyncFilter
    ? (_req: unknown, _file: unknown, callback: (err: Error | null, accept: boolean) => void) => { setImmediate(callback, null, true) }
    : (_req: unknown, _file: unknown, callback: (err: Error | null, accept: boolean) => void) => { callback(null, true) }
  const upload = bodykitMulter({ storage: bodykitMulter.memoryStorage(), limits, fileFilter, defCharset: 'latin1' } as never)
  return upload.array('file') as unknown as Middleware
}

/** bodykit/multer's answer for a Node delivery: its error (class, code, field, message, status) or the files' sizes. */
export async function multerAnswer (middleware: Middleware, headers: Record<string, string>, delivery: Delivery): Promise<Answer> {
  const length = delivery.chunks.reduce((sum, chunk) => sum + chunk.length, 0)
  const run = await runMiddleware(middleware, wireOf(delivery, headers, length), delivery.name)
  if (run.err) {
    const err = run.err as Error & Record<string, unknown>
    return { error: { status: err.status, type: `${err.constructor.name}:${String(err.code)}:${String(err.field)}`, message: err.message } }
  }
  const files = (run.req as { files?: Array<{ size: number }> }).files ?? []
  return { value: JSON.stringify({ body: run.req.body, sizes: files.map((file) => file.size) }) }
}

/** An answer in one line. */
export function describeAnswer (answer: Answer): string {
  return answer.error ? `${String(answer.error.status)} ${String(answer.error.type)} (${answer.error.message})` : `value ${String(answer.value)}`
}
