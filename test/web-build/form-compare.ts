// Shared by the Web form reader's tests and fuzz target: one body read by the Web reader (in given chunks) and by the
// Node build's readMultipart, as comparable answers. No node:test import: the Jazzer target bundles this file.
import { PassThrough } from 'node:stream'
import type { IncomingMessage } from 'node:http'
import { readMultipart } from '../../src/index'
import { createFieldAssembler } from '../../src/multipart/fields'
import { normalizeMultipartOptions } from '../../src/multipart/settings'
import { modern } from '../../src/variants'
import { WEB_BYTES } from '../../src/web/bytes'
import { startWebForm, type WebForm } from '../../src/web/form-reader'
import { NODE_FORMS } from '../../src/parsers/node-forms'

/**
 * An error as test/differential/harness.ts's describeError describes it (class, name, message, status, statusCode,
 * expose, type and every own property), with values as JSON gives them (the errors here hold strings and numbers).
 */
export function describeError (err: unknown): unknown {
  if (err === null || typeof err !== 'object') return { nonObject: String(err) }
  const e = err as Record<string, unknown>
  const props: Record<string, unknown> = {}
  for (const key of Object.keys(e).sort()) props[key] = e[key]
  return {
    isError: err instanceof Error,
    constructor: String((e.constructor as { name?: unknown } | undefined)?.name),
    name: e.name,
    message: e.message,
    status: e.status,
    statusCode: e.statusCode,
    expose: e.expose,
    type: e.type,
    ownEnumerable: props,
    ownNames: Object.getOwnPropertyNames(e).sort()
  }
}

/** An answer as JSON: the error described (status, type, message, every property), or the fields and each file's bytes as hex. */
export type Answer = string

export function describeForm (form: { fields: unknown, files: ReadonlyArray<{ fieldName: string, originalName: string, mimeType: string, encoding: string, size: number, buffer: Uint8Array }> }): Answer {
  return JSON.stringify({
    fields: form.fields,
    prototypes: Object.getPrototypeOf(form.fields) === null ? 'null' : 'object',
    files: form.files.map((file) => ({ ...file, buffer: Buffer.from(file.buffer.buffer, file.buffer.byteOffset, file.buffer.byteLength).toString('hex') }))
  })
}

/** What readMultipart resolves with when the type does not match: the caller's to decide, before any reader. */
export const NOT_READ = 'not read'

export function describeAnswer (answer: unknown): Answer {
  if (answer === undefined) return NOT_READ
  if (answer instanceof Error) return JSON.stringify({ error: describeError(answer) })
  return describeForm(answer as WebForm)
}

/** The Node build's answer: readMultipart on a request stream written in `chunks` (chunked: busboy's streaming reading; with a length, the fast path may read it). */
export async function nodeAnswer (contentType: string, chunks: readonly Uint8Array[], options: Record<string, unknown>, withLength = false): Promise<Answer> {
  const total = chunks.reduce((n, c) => n + c.length, 0)
  const req = Object.assign(new PassThrough(), {
    method: 'POST',
    url: '/',
    headers: { host: 'localhost', 'content-type': contentType, ...(withLength ? { 'content-length': String(total) } : { 'transfer-encoding': 'chunked' }) }
  })
  const reading = readMultipart(req as unknown as IncomingMessage, { limit: Infinity, ...options }).then(describeAnswer, describeAnswer)
  for (const chunk of chunks) {
    await new Promise((resolve) => setImmediate(resolve))
    if (chunk.length > 0) req.write(Buffer.from(chunk))
  }
  req.end()
  return await reading
}

/** The Web reader's answer for the same request, the body written in `chunks`. */
export function webAnswer (contentType: string, chunks: readonly Uint8Array[], options: Record<string, unknown>): Answer {
  return describeAnswer(webResult(contentType, chunks, options))
}

/** The Web reader's result: its error or form; throws where the reader broke its contract (a throw, two errors). */
export function webResult (contentType: string, chunks: readonly Uint8Array[], options: Record<string, unknown>): Error | WebForm {
  const settings = normalizeMultipartOptions({ limit: Infinity, ...options })
  const reader = startWebForm(contentType, settings, createFieldAssembler(settings, modern, NODE_FORMS, WEB_BYTES.decode))
  if (reader instanceof Error) return reader
  let failed: Error | null = null
  for (const chunk of chunks) {
    const err = reader.write(chunk)
    if (failed !== null && err !== failed) throw new Error('a later write answered another error')
    failed = err
  }
  const end = reader.end()
  if (failed !== null && end !== failed) throw new Error('end() answered other than the write that failed')
  if (reader.end() !== end) throw new Error('a second end() answered otherwise')
  return end
}

/** The body cut at the given points (each taken modulo its length + 1). */
export function splitBody (body: Uint8Array, points: readonly number[]): Uint8Array[] {
  const cuts = [...new Set(points.map((p) => p % (body.length + 1)))].sort((a, b) => a - b)
  const out: Uint8Array[] = []
  let at = 0
  for (const cut of cuts) {
    out.push(body.subarray(at, cut))
    at = cut
  }
  out.push(body.subarray(at))
  return out
}
