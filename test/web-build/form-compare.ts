// Shared by the Web form reader's tests: one body read by the Web reader (in given chunks) and by the Node build's readMultipart, as comparable answers.
import { PassThrough } from 'node:stream'
import type { IncomingMessage } from 'node:http'
import { readMultipart } from '../../src/index'
import { createFieldAssembler } from '../../src/multipart/fields'
import { normalizeMultipartOptions } from '../../src/multipart/settings'
import { modern } from '../../src/variants'
import { startWebForm, type WebForm } from '../../src/web/form-reader'
import { describeError } from '../differential/harness'

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
  const settings = normalizeMultipartOptions({ limit: Infinity, ...options })
  const reader = startWebForm(contentType, settings, createFieldAssembler(settings, modern))
  if (reader instanceof Error) return describeAnswer(reader)
  let failed: Error | null = null
  for (const chunk of chunks) {
    const err = reader.write(chunk)
    if (failed !== null && err !== failed) throw new Error('a later write answered another error')
    failed = err
  }
  const end = reader.end()
  if (failed !== null && end !== failed) throw new Error('end() answered other than the write that failed')
  return describeAnswer(end)
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
