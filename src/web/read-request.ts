// The Web build's pipeline: the Node pipeline's steps and answers (read.ts), for a Request read with its own reader.
import { refuseBeforeReading, validateBody } from '../body-rules'
import * as errors from '../errors'
import type { IncomingMessage } from 'http'
import { readContentTypeLeniently } from '../content-type'
import { LENGTH_DIGITS, webRequestDeclaresBody } from '../protocol'
import type { WebRequest } from '../types'
import { readInflatedBytes } from './inflated-bytes'
import { readBodyBytes, type BodyReader, type BodyVerdict, type TakeBytes } from './wire-bytes'
import { joinBytes } from './bytes'
import { decodeWebBody } from './decode'
import { startWebForm, type WebForm } from './form-reader'
import { webDecompressors } from './inflate'
import { WEB_DECODING, type WebSettings } from './settings'

/**
 * Reads one Request as the Node build's reader reads it: resolves with the parsed body (a form as `{ fields, files }`),
 * `undefined` when there is nothing to read, or the schema's output; rejects with the error the middleware would pass
 * to `next`. A refused body is cancelled, so the runtime stops reading the upload.
 */
export async function readRequest (settings: WebSettings, request: WebRequest): Promise<unknown> {
  const header = (name: string): string | undefined => request.headers.get(name) ?? undefined
  // Read by something else: as a body already parsed.
  if (request.bodyUsed) return passBody(settings, request, false)
  if (!webRequestDeclaresBody(request.body !== null, header)) return passBody(settings, request, false)
  const contentType = readContentTypeLeniently(header('content-type'))
  // The type matcher's function form is given the Request (the Node build gives a request view).
  if (!settings.shouldParse(request as unknown as IncomingMessage, contentType)) return passBody(settings, request, true)

  let charset: string | null = null
  if (settings.acceptsCharset !== null) {
    charset = contentType.charset || settings.defaultCharset
    if (!settings.acceptsCharset(charset)) throw cancelled(request, errors.unsupportedCharset(charset))
  }
  const contentEncoding = (header('content-encoding') || 'identity').toLowerCase()
  const length = header('content-length')
  if (length !== undefined && !LENGTH_DIGITS.test(length)) throw cancelled(request, errors.malformedContentLength(length))
  const refusal = refuseBeforeReading(settings, WEB_DECODING, contentEncoding, charset)
  if (refusal !== null) throw cancelled(request, refusal)
  const form = settings.form === null ? null : startWebForm(header('content-type') as string, settings.form.settings, settings.form.assemble)
  if (form instanceof Error) throw cancelled(request, form)

  // A body another reader holds is theirs, as one already read.
  let reader: BodyReader | null = null
  if (request.body !== null) {
    try {
      reader = request.body.getReader()
    } catch {
      return passBody(settings, request, false)
    }
  }
  const declared = length === undefined ? null : Number(length)
  const tooLarge = declared !== null && declared > settings.limit ? errors.entityTooLarge(settings.limit, 0, declared) : null
  if (charset !== null && !WEB_DECODING.knowsCharset(charset)) {
    // Known to the Node build only once it builds its decoder: after the length check for a body read as it is.
    const first = contentEncoding === 'identity' ? tooLarge : null
    throw cancelledReader(reader, first ?? errors.unsupportedCharset(charset.toLowerCase()))
  }
  if (tooLarge !== null) throw cancelledReader(reader, tooLarge)

  if (form !== null) {
    const verdict = await readBytes(reader, declared, settings.limit, contentEncoding, (chunk) => form.write(chunk), false)
    // A compressed body's wrong length is known once its inflated bytes have all reached the form, whose end comes first (as in the Node build's stage).
    const lengthLast = verdict !== null && contentEncoding !== 'identity' && (verdict as { type?: unknown }).type === 'request.size.invalid'
    if (verdict !== null && !lengthLast) throw verdict
    const result = form.end()
    if (lengthLast) throw result instanceof Error ? result : verdict
    if (result instanceof Error) throw result
    return deliverForm(settings, result)
  }
  const chunks: Uint8Array[] = []
  let size = 0
  const verdict = await readBytes(reader, declared, settings.limit, contentEncoding, (chunk) => {
    chunks.push(chunk)
    size += chunk.byteLength
    return null
  }, true)
  if (verdict !== null) throw verdict
  return finish(settings, request, joinBytes(chunks, size), charset)
}

/** The body's bytes to `take`, inflated when the body is compressed (`whole`: a body read whole, not a form); a Request with no body stream has none. */
function readBytes (reader: BodyReader | null, declared: number | null, limit: number, contentEncoding: string, take: TakeBytes,
  whole: boolean): Promise<BodyVerdict> {
  if (reader === null) return Promise.resolve(declared !== null && declared !== 0 ? errors.sizeMismatch(0, declared) : null)
  if (contentEncoding === 'identity') return readBodyBytes(reader, declared, limit, take)
  return readInflatedBytes(reader, declared, limit, webDecompressors().get(contentEncoding) as string, take, whole)
}

/** The body was read in full: verify it, decode it with its charset and parse it, then check it with the schema. */
function finish (settings: WebSettings, request: WebRequest, body: Uint8Array, charset: string | null): Promise<unknown> | unknown {
  if (settings.verify) {
    try {
      // The Request stands for the Node request; there is no response.
      settings.verify(request as unknown as IncomingMessage, undefined as never, body as never, charset as string)
    } catch (err) {
      throw errors.verifyFailed(err, body as never)
    }
  }
  let decoded: string | Uint8Array = body
  let parsed: unknown
  try {
    if (charset !== null) decoded = decodeWebBody(body, charset)
    parsed = settings.parse(decoded as never, charset)
  } catch (err) {
    throw errors.parseFailed(err, decoded as never)
  }
  return settings.schema === null ? parsed : validated(settings, parsed)
}

/** A form read in full: its fields checked by the schema, its files as they are. */
async function deliverForm (settings: WebSettings, form: WebForm): Promise<unknown> {
  if (settings.schema === null) return form
  return { fields: await validated(settings, form.fields), files: form.files }
}

/**
 * Nothing to parse: `undefined` (a form reader's, with a schema, `{ fields, files: [] }`), checked by the schema when
 * there is one. `unread`: the Request has a body no parser read, cancelled when the schema refuses.
 */
async function passBody (settings: WebSettings, request: WebRequest, unread: boolean): Promise<unknown> {
  if (settings.schema === null) return undefined
  let value: unknown
  try {
    value = await validated(settings, undefined)
  } catch (err) {
    throw unread ? cancelled(request, err as Error) : err
  }
  return settings.form === null ? value : { fields: value, files: [] }
}

/** The schema's output for a value, or its refusal. */
function validated (settings: WebSettings, value: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => { validateBody(settings.schema as never, value, reject, resolve) })
}

/** Cancels a refused Request's body unless another reader holds it, and gives the error back. */
function cancelled (request: WebRequest, err: Error): Error {
  const body = request.body
  if (body !== null && !body.locked) body.getReader().cancel(err).catch(ignore)
  return err
}

function cancelledReader (reader: BodyReader | null, err: Error): Error {
  if (reader !== null) reader.cancel(err).catch(ignore)
  return err
}

function ignore (): void {}
