// bodykit/h3's readers: h3's body utilities (names, answers, cache) over a build's limited readers, for h3 1.x events (a Node request) and 2.x events (a Web Request).
import { destr } from 'destr'
import type { readContentTypeLeniently } from '../content-type'
import type * as errorModule from '../errors'
import type { FormField } from '../multipart/fields'
import type { AnyOptions, PoisoningAction, StandardSchemaV1 } from '../options'
import type { createPoisoningGuard, readPoisoningAction } from '../parsers/json'
import type { H3BodyOptions, H3BodyReaders, H3Event, H3FormOptions, H3Readers, MultiPartData, ValidateFunction } from './types'

/** A file as a build's form reader stores it in memory. */
export interface PartFile { fieldName: string, originalName: string, mimeType: string, buffer: Uint8Array }

/** A form as a build reads it for h3: its fields in order (each knowing how many files came before it), and its files. */
export interface ListedForm { fields: readonly FormField[], files: readonly PartFile[] }

/**
 * The modules the readers share with the build's readers, handed over by the build (so that the Web build's bundle,
 * which imports bodykit/web's, holds one copy of each).
 * @internal
 */
export interface SharedModules {
  readonly readContentType: typeof readContentTypeLeniently
  readonly errors: Pick<typeof errorModule, 'isBodyParserError' | 'unsupportedCharset' | 'invalidBoundary' | 'parseFailed' | 'requestAborted'>
  readonly createPoisoningGuard: typeof createPoisoningGuard
  readonly readPoisoningAction: typeof readPoisoningAction
}

/**
 * What the readers are built over: a build's limited readers of bytes and of forms (each taking settings it validated
 * from options), its charsets, and its bytes (Node's Buffer for h3 1.x, a Uint8Array in the Web build).
 * @internal
 */
export interface H3Build {
  readonly shared: SharedModules
  readonly bytesSettings: (options: AnyOptions) => unknown
  readonly formSettings: (options: AnyOptions) => unknown
  /** The body's bytes, limited and inflated; undefined when there is nothing to read. `source`: a Node request or a Request. */
  readonly readBytes: (source: unknown, settings: unknown, res: unknown) => Promise<Uint8Array | undefined>
  /** A multipart form read with its limits, files in memory; undefined when there is nothing to read. */
  readonly readForm: (source: unknown, settings: unknown, res: unknown) => Promise<ListedForm | undefined>
  /**
   * The Node request under h3 2.x's Request when it can be read in its place (srvx's, on Node, untouched: nothing has
   * read it or holds a stream of it); else null. Reading it skips the Web stream srvx would make of it.
   */
  readonly untouchedNodeRequest: (request: Request) => unknown
  readonly knowsCharset: (charset: string) => boolean
  readonly decode: (bytes: Uint8Array, charset: string) => string
  /** Bytes as h3 1.x hands them out (a Buffer on Node), without a copy. */
  readonly asNodeBytes: (bytes: Uint8Array) => Uint8Array
  /** Bytes as text in a Node encoding name, as h3 1.x's `readRawBody(event, encoding)` gives them. */
  readonly nodeText: (bytes: Uint8Array, encoding: string) => string
}

/**
 * The app's h3, as the entry loaded it: its error factory (an H3Error in 1.x, an HTTPError in 2.x), its error check,
 * and 1.x's own validation (bodykit hands it the body it read, through h3's cache).
 * @internal
 */
export interface H3Module {
  createError: (input: Record<string, unknown>) => Error
  isError: (input: unknown) => boolean
  readValidatedBody?: (event: never, validate: ValidateFunction<unknown>) => Promise<unknown>
}

/** The symbols under which h3 1.x caches a request's bytes (a promise) and its parsed body, on the Node request. */
const RAW_BODY = Symbol.for('h3RawBody')
const PARSED_BODY = Symbol.for('h3ParsedBody')
const PAYLOAD_METHODS = ['PATCH', 'POST', 'PUT', 'DELETE']
/** readBody's and readRawBody's limit unless the app gives one: body-parser's. */
const DEFAULT_LIMIT = '100kb'
/** The status lines h3 shows for bodykit's statuses. */
const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request', 403: 'Forbidden', 405: 'Method Not Allowed', 411: 'Length Required', 413: 'Request Entity Too Large',
  415: 'Unsupported Media Type', 500: 'Internal Server Error'
}
const VALIDATION_FAILED = 'Validation failed'
const EMPTY = new Uint8Array(0)
const matchAll = (): boolean => true
const utf8 = new TextDecoder()
const encoder = new TextEncoder()

/** One request as the readers see it: its h3 major, the request to read, the response (Node only) and its headers. */
interface Source {
  readonly major: 1 | 2
  /** h3 1.x: the Node request; h3 2.x: the Web Request. */
  readonly req: NodeRequestLike | Request
  readonly res: unknown
  readonly header: (name: string) => string | undefined
  /** h3 2.x on Node: srvx's Node request, whose socket tells when the client has gone. */
  readonly nodeRequest?: { socket?: SocketLike | null }
  /** Whether h3's own text() keeps a UTF-8 BOM: h3 1.x's Buffer, and h3 2.x on srvx's Node request (a Buffer too); a Web Request strips it. */
  readonly keepsBom: boolean
}

interface SocketLike {
  destroyed?: boolean
  once: (event: 'close', listener: () => void) => unknown
  removeListener: (event: 'close', listener: () => void) => unknown
}

interface NodeRequestLike {
  method?: string
  headers: Record<string, string | string[] | undefined>
  [key: symbol]: unknown
  rawBody?: unknown
  body?: unknown
}

interface H3v1EventLike {
  method?: string
  _requestBody?: unknown
  web?: { request?: Request }
  node: { req: NodeRequestLike, res: unknown }
}

/** Options read once per options object: the build's settings for bytes and for forms, and h3's own switches. */
interface Prepared {
  readonly bytes: unknown
  form: unknown
  readonly formOptions: AnyOptions
  readonly guard: ((value: unknown, text: string) => void) | null
  readonly strict: boolean | undefined
  readonly bodyType: 'json' | 'text' | 'urlencoded' | 'formData' | undefined
}

/**
 * Builds bodykit/h3's readers over a build, throwing `h3`'s errors.
 * @internal
 */
export function createH3Readers (build: H3Build, h3: H3Module): H3Readers {
  const { errors, readContentType, createPoisoningGuard, readPoisoningAction } = build.shared
  /** The request's multipart parts, read once per request (h3 1.x reads the cached bytes again on a second call). */
  const formsRead = new WeakMap<object, Promise<ListedForm | undefined>>()
  /** h3 2.x's Request bytes, read once per Request (h3 2.x itself cannot read a body twice). */
  const bytesRead = new WeakMap<object, Promise<Uint8Array | undefined>>()

  function prepare (options: H3FormOptions | null | undefined): Prepared {
    const { strict, type, limit, inflate, ...formOnly } = (options ?? {}) as H3FormOptions & { type?: unknown }
    if (type !== undefined && type !== 'json' && type !== 'text' && type !== 'urlencoded' && type !== 'formData') {
      throw new TypeError('option type must be "json", "text", "urlencoded" or "formData" (what h3 2.x\'s readBody reads the body as)')
    }
    if (strict !== undefined && typeof strict !== 'boolean') throw new TypeError('option strict must be a boolean')
    const protoAction: PoisoningAction = readPoisoningAction(options as AnyOptions, 'onProtoPoisoning')
    const constructorAction: PoisoningAction = readPoisoningAction(options as AnyOptions, 'onConstructorPoisoning')
    const files = formOnly.files
    const formOptions = {
      ...formOnly, limit, inflate, type: matchAll,
      // h3 reads files into memory: so does bodykit/h3, within multipart's finite limits.
      files: files === false ? false : { ...(typeof files === 'object' && files !== null ? files : {}), storage: 'memory' }
    } as AnyOptions
    return {
      bytes: build.bytesSettings({ limit: limit ?? DEFAULT_LIMIT, inflate, type: matchAll } as AnyOptions),
      form: undefined,
      formOptions,
      guard: createPoisoningGuard(protoAction, constructorAction),
      strict,
      bodyType: type as Prepared['bodyType']
    }
  }

  /** The form settings, validated on the first form read of a per-call options object (createBodyReaders validates them at once). */
  function formSettingsOf (prepared: Prepared): unknown {
    return (prepared.form ??= build.formSettings(prepared.formOptions))
  }

  const preparedFor = new WeakMap<object, Prepared>()
  const defaults = prepare(undefined)
  function preparedOf (options: H3FormOptions | null | undefined): Prepared {
    if (options == null) return defaults
    let prepared = preparedFor.get(options)
    if (prepared === undefined) {
      prepared = prepare(options)
      preparedFor.set(options, prepared)
    }
    return prepared
  }

  /** A bodykit refusal as the app's h3 error (status, status line, message, and bodykit's `type` in `data`); anything else as it is. */
  function toH3Error (err: unknown): unknown {
    if (!errors.isBodyParserError(err)) return err
    const statusMessage = REASONS[err.status]
    return h3.createError({
      statusCode: err.status,
      statusMessage,
      message: err.expose ? err.message : statusMessage,
      data: { type: err.type },
      cause: err
    })
  }

  function formReadError (): Error {
    return h3.createError({ statusCode: 500, statusMessage: 'Internal Server Error', message: 'The body was read as a form by bodykit/h3: read it again with its form readers' })
  }

  function badRequest (message: string, type: string): Error {
    return h3.createError({ statusCode: 400, statusMessage: 'Bad Request', message, data: { type } })
  }

  function sourceOf (event: H3Event): Source {
    const req = (event as { req?: unknown }).req as Request | undefined
    if (req !== undefined && req !== null && typeof (req.headers as Headers | undefined)?.get === 'function') {
      const node = (req as { runtime?: { node?: { req?: Source['nodeRequest'], res?: unknown } } }).runtime?.node
      return { major: 2, req, res: node?.res, header: (name) => req.headers.get(name) ?? undefined, keepsBom: node !== undefined, nodeRequest: node?.req }
    }
    const node = (event as unknown as H3v1EventLike).node
    const headers = node.req.headers
    return {
      major: 1,
      req: node.req,
      res: node.res,
      keepsBom: true,
      header: (name) => {
        const value = headers[name]
        // h3 1.x's getRequestHeader joins a repeated header's values.
        return Array.isArray(value) ? value.filter(Boolean).join(', ') : value
      }
    }
  }

  /**
   * A read that also ends when the client's connection closes. h3 2.x on Node reads srvx's stream of the request,
   * which never ends once an answer is out and the client leaves with its body unfinished (Node stops passing the
   * body on, and srvx aborts the request's signal only before an answer): the read would wait for good.
   */
  function untilClientGone<T> (source: Source, read: Promise<T>): Promise<T> {
    const socket = source.nodeRequest?.socket
    if (socket === undefined || socket === null || typeof socket.once !== 'function') return read
    return new Promise<T>((resolve, reject) => {
      const onClose = (): void => { reject(errors.requestAborted(0, null)) }
      socket.once('close', onClose)
      read.then((value) => {
        socket.removeListener('close', onClose)
        resolve(value)
      }, (err: unknown) => {
        socket.removeListener('close', onClose)
        reject(err)
      })
    })
  }

  /** h3 1.x's readRawBody refuses a method without a body before it reads. */
  function assertPayloadMethod (event: H3Event): void {
    const method = ((event as H3v1EventLike).method ?? (event as H3v1EventLike).node.req.method ?? 'GET').toUpperCase()
    if (!PAYLOAD_METHODS.includes(method)) throw h3.createError({ statusCode: 405, statusMessage: 'HTTP method is not allowed.' })
  }

  /** The request's charset, when it names one that is not UTF-8; an unknown one is refused before reading (415). */
  function otherCharsetOf (source: Source): string | null {
    const charset = readContentType(source.header('content-type')).charset
    if (charset === undefined || charset === '' || charset === 'utf-8' || charset === 'utf8') return null
    if (!build.knowsCharset(charset)) throw toH3Error(errors.unsupportedCharset(charset))
    return charset
  }

  /** Bytes as text: a named charset decoded as body-parser decodes it, UTF-8 as the event's h3 decodes it (a BOM kept or not). */
  function textOf (source: Source, bytes: Uint8Array, charset: string | null): string {
    if (charset !== null) return build.decode(bytes, charset)
    return source.keepsBom ? build.nodeText(bytes, 'utf8') : utf8.decode(bytes)
  }

  /** The request's bytes (limited, inflated), read once: h3 1.x's rules for what there is to read, and its cache. */
  function readBytesOf (event: H3Event, source: Source, prepared: Prepared): Promise<Uint8Array | undefined> {
    if (source.major === 2) {
      const req = source.req as Request
      let read = bytesRead.get(req)
      if (read === undefined) {
        const direct = build.untouchedNodeRequest(req)
        read = direct !== null
          ? build.readBytes(direct, prepared.bytes, source.res).then((bytes) => bytes === undefined ? undefined : plainBytes(bytes))
          : untilClientGone(source, build.readBytes(req, prepared.bytes, source.res))
        read = read.catch((err: unknown) => { throw toH3Error(err) })
        bytesRead.set(req, read)
      }
      return read
    }
    assertPayloadMethod(event)
    const v1 = event as H3v1EventLike
    const req = source.req as NodeRequestLike
    const present = presentBodyOf(v1)
    if (present) return Promise.resolve(present).then((value) => bytesOfPresent(v1, source, value, prepared))
    if (!declaresBody(source)) return Promise.resolve(undefined)
    const read = build.readBytes(req, prepared.bytes, source.res).then(
      (bytes) => bytes === undefined ? undefined : build.asNodeBytes(bytes),
      (err: unknown) => { throw toH3Error(err) })
    // h3's own readers, later in the request, take the bytes from here.
    req[RAW_BODY] = read
    return read
  }

  /** A body present before bodykit reads it, as bytes: a stream is read within the limit, anything else as h3 1.x converts it. */
  async function bytesOfPresent (event: H3v1EventLike, source: Source, value: unknown, prepared: Prepared): Promise<Uint8Array | undefined> {
    if (value instanceof Uint8Array) return build.asNodeBytes(value)
    const request = requestOfPresent(event, source, value)
    if (request !== null) {
      try {
        const bytes = await build.readBytes(request, prepared.bytes, undefined)
        return build.asNodeBytes(bytes ?? EMPTY)
      } catch (err) {
        throw toH3Error(err)
      }
    }
    if (typeof value === 'object' && value !== null && value.constructor === Object) return build.asNodeBytes(encoder.encode(JSON.stringify(value)))
    if (value instanceof URLSearchParams) return build.asNodeBytes(encoder.encode(value.toString()))
    if (value instanceof FormData) return build.asNodeBytes(new Uint8Array(await new Response(value).arrayBuffer()))
    return build.asNodeBytes(encoder.encode(String(value)))
  }

  /** A present body that is a stream, as a Request to read with the limits (h3 1.x's Web request itself, when it is one); else null. */
  function requestOfPresent (event: H3v1EventLike, source: Source, value: unknown): Request | null {
    const web = event.web?.request
    if (web !== undefined && value === web.body) return web
    const stream = typeof (value as ReadableStream).pipeTo === 'function'
      ? value as ReadableStream
      : typeof (value as { pipe?: unknown }).pipe === 'function' && typeof ReadableStream.from === 'function'
        ? ReadableStream.from(value as AsyncIterable<Uint8Array>)
        : null
    if (stream === null) return null
    const headers = new Headers()
    // Not the request's length: the stream is what Nitro or a test hands over, not necessarily the bytes on the wire.
    for (const name of ['content-type', 'content-encoding']) {
      const header = source.header(name)
      if (header !== undefined) headers.set(name, header)
    }
    return new Request('http://localhost/', { method: 'POST', headers, body: stream, duplex: 'half' } as RequestInit)
  }

  async function readRawBodyWith (event: H3Event, encoding: string | false, prepared: Prepared): Promise<string | Uint8Array | undefined> {
    const source = sourceOf(event)
    const bytes = await readBytesOf(event, source, prepared)
    if (source.major === 1) {
      if (bytes === undefined) return undefined
      return encoding ? build.nodeText(bytes, encoding) : bytes
    }
    // h3 2.x answers an empty string (or no bytes) where there is no body.
    return encoding ? textOf(source, bytes ?? EMPTY, null) : plainBytes(bytes ?? EMPTY)
  }

  async function readBodyWith (event: H3Event, prepared: Prepared, strict: boolean | undefined, bodyType: Prepared['bodyType']): Promise<unknown> {
    const source = sourceOf(event)
    if (source.major === 1) {
      const req = source.req as NodeRequestLike
      if (hasProp(req, PARSED_BODY)) return req[PARSED_BODY]
      assertPayloadMethod(event)
      const contentType = source.header('content-type') || ''
      const charset = otherCharsetOf(source)
      const bytes = await readBytesOf(event, source, prepared)
      const text = bytes === undefined ? undefined : textOf(source, bytes, charset)
      const parsed = parseAsH3v1(contentType, text, strict, prepared)
      req[PARSED_BODY] = parsed
      return parsed
    }
    if (bodyType === 'formData') return collectEntries((await readFormDataWith(event, prepared)).entries(), 2)
    const charset = otherCharsetOf(source)
    const bytes = await readBytesOf(event, source, prepared)
    const text = bytes === undefined ? '' : textOf(source, bytes, charset)
    if (bodyType === 'text') return text
    if (!text) return undefined
    if (bodyType === 'urlencoded' || (bodyType === undefined && (source.header('content-type') ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded'))) {
      return collectEntries(new URLSearchParams(text).entries(), 2)
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw badRequest('Invalid JSON body', 'entity.parse.failed')
    }
    guardPrototypes(prepared, parsed, text)
    return parsed
  }

  /** h3 1.x's reading of a body by its exact Content-Type: destr (strict for `application/json` alone), a form, or text. */
  function parseAsH3v1 (contentType: string, text: string | undefined, strict: boolean | undefined, prepared: Prepared): unknown {
    if (contentType.startsWith('application/x-www-form-urlencoded')) return collectEntries(new URLSearchParams(text).entries(), 1)
    if (contentType.startsWith('text/')) return text
    if (!text) return undefined
    let parsed: unknown
    try {
      parsed = destr(text, { strict: strict ?? contentType === 'application/json' })
    } catch {
      throw badRequest('Invalid JSON body', 'entity.parse.failed')
    }
    guardPrototypes(prepared, parsed, text)
    return parsed
  }

  function guardPrototypes (prepared: Prepared, parsed: unknown, text: string): void {
    if (prepared.guard === null) return
    try {
      prepared.guard(parsed, text)
    } catch (err) {
      throw toH3Error(errors.parseFailed(err, text))
    }
  }

  async function readValidatedBodyWith (event: H3Event, validate: unknown, prepared: Prepared, onError?: (result: unknown) => unknown): Promise<unknown> {
    const source = sourceOf(event)
    if (source.major === 1 && h3.readValidatedBody !== undefined) {
      // h3 1.x validates the body its readBody caches: bodykit reads it into that cache, then h3 validates it.
      await readBodyWith(event, prepared, true, undefined)
      return h3.readValidatedBody(event as never, asValidateFunction(validate))
    }
    return validateAsH3v2(await readBodyWith(event, prepared, prepared.strict, prepared.bodyType), validate, onError)
  }

  /** h3 2.x's validation: a Standard Schema's issues, or a function's false or throw, as a 400 HTTPError. */
  async function validateAsH3v2 (data: unknown, validate: unknown, onError?: (result: unknown) => unknown): Promise<unknown> {
    if (isStandardSchema(validate)) {
      const result = await (validate as StandardSchemaV1)['~standard'].validate(data)
      if (result.issues) throw validationError(onError?.(result) || { message: VALIDATION_FAILED, issues: result.issues })
      return (result as { value: unknown }).value
    }
    try {
      const result = await (validate as ValidateFunction<unknown>)(data)
      if (result === false) throw validationError(onError?.({ issues: [{ message: VALIDATION_FAILED }] }) || { message: VALIDATION_FAILED })
      if (result === true) return data
      return result ?? data
    } catch (err) {
      throw validationError(err)
    }
  }

  function validationError (cause: unknown): unknown {
    if (h3.isError(cause)) return cause
    const given = cause as { status?: number, statusText?: string, message?: string, issues?: unknown } | undefined
    return h3.createError({
      cause,
      status: given?.status || 400,
      statusText: given?.statusText || VALIDATION_FAILED,
      message: given?.message || VALIDATION_FAILED,
      data: { issues: given?.issues, message: cause instanceof Error ? VALIDATION_FAILED : given?.message || VALIDATION_FAILED }
    })
  }

  /** The request's form read once, with the limits. */
  function readFormOf (event: H3Event, source: Source, prepared: Prepared): Promise<ListedForm | undefined> {
    let read = formsRead.get(source.req)
    if (read === undefined) {
      read = startFormRead(event, source, prepared)
      formsRead.set(source.req, read)
    }
    return read
  }

  async function startFormRead (event: H3Event, source: Source, prepared: Prepared): Promise<ListedForm | undefined> {
    let request: unknown = source.major === 2 ? build.untouchedNodeRequest(source.req as Request) ?? source.req : source.req
    if (source.major === 1) {
      assertPayloadMethod(event)
      const v1 = event as H3v1EventLike
      const req = source.req as NodeRequestLike
      const present = presentBodyOf(v1)
      if (present) {
        const bytes = await Promise.resolve(present).then((value) => bytesOfPresent(v1, source, value, prepared))
        request = new Request('http://localhost/', { method: 'POST', headers: { 'content-type': source.header('content-type') as string }, body: bytes as NonNullable<RequestInit['body']> })
      } else if (!declaresBody(source)) {
        return undefined
      } else {
        // The form is read as a stream and not kept: h3's own readers, which would wait for good on the finished
        // request, find this in its cache instead, an error when they take it (a thenable: no rejection until then).
        req[RAW_BODY] = { then: (_resolve: unknown, reject: (err: unknown) => void) => { reject(formReadError()) } }
      }
    }
    try {
      return await untilClientGone(source, build.readForm(request, formSettingsOf(prepared), source.res))
    } catch (err) {
      throw toH3Error(err)
    }
  }

  async function readMultipartFormDataWith (event: H3Event, prepared: Prepared): Promise<MultiPartData[] | undefined> {
    const source = sourceOf(event)
    const contentType = source.header('content-type')
    if (source.major === 1) {
      // h3 1.x reads only what names multipart/form-data with a boundary, and answers undefined for anything else.
      if (!contentType?.startsWith('multipart/form-data') || !/boundary=([^;]*)(;|$)/i.test(contentType)) return undefined
    } else if (isUrlencoded(contentType)) {
      // h3 2.x reads a urlencoded body's fields as parts too (Request.formData()).
      return [...(await readUrlencodedForm(event, source, prepared)).entries()].map(([name, value]) => ({ name, data: encoder.encode(value as string) }))
    } else if (!isMultipart(contentType)) {
      throw toH3Error(errors.invalidBoundary())
    }
    const form = await readFormOf(event, source, prepared)
    if (form === undefined) return source.major === 1 ? undefined : []
    return listParts(form, source.major)
  }

  /** The form's parts in the order they came, as the event's h3 lists them. */
  function listParts (form: ListedForm, major: 1 | 2): MultiPartData[] {
    const parts: MultiPartData[] = []
    let next = 0
    const addFile = (file: PartFile): void => {
      const data = major === 1 ? build.asNodeBytes(file.buffer) : plainBytes(file.buffer)
      parts.push(major === 1
        ? { name: file.fieldName, filename: file.originalName, type: file.mimeType, data }
        : { name: file.fieldName, type: file.mimeType, filename: file.originalName, data })
    }
    for (const field of form.fields) {
      while (next < (field.filesBefore ?? 0)) addFile(form.files[next++])
      const data = major === 1
        ? build.asNodeBytes(typeof field.value === 'string' ? encoder.encode(field.value) : field.value)
        // h3 2.x's fields come from Request.formData(): their text as UTF-8.
        : encoder.encode(typeof field.value === 'string' ? field.value : utf8.decode(field.value))
      parts.push({ name: field.name, data })
    }
    while (next < form.files.length) addFile(form.files[next++])
    return parts
  }

  async function readUrlencodedForm (event: H3Event, source: Source, prepared: Prepared): Promise<FormData> {
    const charset = otherCharsetOf(source)
    const bytes = await readBytesOf(event, source, prepared)
    const form = new FormData()
    if (bytes === undefined) return form
    for (const [name, value] of new URLSearchParams(textOf(source, bytes, charset))) form.append(name, value)
    return form
  }

  async function readFormDataWith (event: H3Event, prepared: Prepared): Promise<FormData> {
    const source = sourceOf(event)
    const contentType = source.header('content-type')
    if (isUrlencoded(contentType)) return readUrlencodedForm(event, source, prepared)
    if (!isMultipart(contentType)) throw toH3Error(errors.invalidBoundary())
    const form = new FormData()
    const read = await readFormOf(event, source, prepared)
    if (read === undefined) return form
    for (const part of listParts(read, 2)) {
      if (part.filename === undefined) form.append(part.name as string, utf8.decode(part.data))
      else form.append(part.name as string, new File([part.data as Uint8Array<ArrayBuffer>], part.filename, { type: part.type }))
    }
    return form
  }

  function bind (prepared: Prepared): H3BodyReaders {
    return {
      readBody: (event, options) => readBodyWith(event, prepared, options?.strict ?? prepared.strict, options?.type ?? prepared.bodyType) as Promise<never>,
      readRawBody: ((event: H3Event, encoding: string | false = 'utf8') => readRawBodyWith(event, encoding, prepared)) as H3BodyReaders['readRawBody'],
      readValidatedBody: (event, validate, options) => readValidatedBodyWith(event, validate, prepared, options?.onError as never) as Promise<never>,
      readFormData: (event) => readFormDataWith(event, prepared),
      readMultipartFormData: (event) => readMultipartFormDataWith(event, prepared)
    }
  }

  return {
    readBody: (event, options) => {
      const prepared = preparedOf(options)
      return readBodyWith(event, prepared, prepared.strict, prepared.bodyType) as Promise<never>
    },
    readRawBody: ((event: H3Event, encoding: string | false = 'utf8', options?: H3BodyOptions | null) => readRawBodyWith(event, encoding, preparedOf(options))) as H3BodyReaders['readRawBody'],
    readValidatedBody: (event, validate, options) => readValidatedBodyWith(event, validate, preparedOf(options), options?.onError as never) as Promise<never>,
    readFormData: (event, options) => readFormDataWith(event, preparedOf(options)),
    readMultipartFormData: (event, options) => readMultipartFormDataWith(event, preparedOf(options)),
    createBodyReaders (options) {
      const prepared = prepare(options)
      // Every option is checked now, where the app creates the readers, not on the first request.
      formSettingsOf(prepared)
      return bind(prepared)
    }
  }
}

/** A Standard Schema as the validate function h3 1.x calls: its issues thrown as the error h3 reports. */
function asValidateFunction (validate: unknown): ValidateFunction<unknown> {
  if (!isStandardSchema(validate)) return validate as ValidateFunction<unknown>
  return async (data) => {
    const result = await (validate as StandardSchemaV1)['~standard'].validate(data)
    if (result.issues) throw Object.assign(new Error('Validation Error'), { issues: result.issues })
    return (result as { value: unknown }).value as never
  }
}

/** A body something else holds, as h3 1.x takes it before reading: Nitro's `_requestBody`, a Web request's, h3's cache, a body already parsed. */
function presentBodyOf (event: H3v1EventLike): unknown {
  const req = event.node.req
  return event._requestBody || event.web?.request?.body || req[RAW_BODY] || req.rawBody || req.body
}

/** h3 1.x's rule: nothing to read without a length or a chunked transfer. */
function declaresBody (source: Source): boolean {
  return Boolean(Number.parseInt(source.header('content-length') ?? '')) || /\bchunked\b/i.test(source.header('transfer-encoding') ?? '')
}

/** A Standard Schema (an object, or a callable such as arktype's types), which h3 2.x checks for before calling a function. */
function isStandardSchema (validate: unknown): validate is StandardSchemaV1 {
  return (typeof validate === 'object' || typeof validate === 'function') && validate !== null && '~standard' in validate
}

/** h3 2.x's empty objects: no Object.prototype, from a constructor (so a form's prototype is an empty one, as h3 2.x's is). */
const EmptyObject = function EmptyObject () {} as unknown as new () => Record<string, unknown>
EmptyObject.prototype = Object.create(null) as object

/** h3's object of a form's entries: a repeated name's values as an array, with no Object.prototype (1.x: none at all). */
function collectEntries (entries: Iterable<[string, unknown]>, major: 1 | 2): Record<string, unknown> {
  const parsed = major === 1 ? Object.create(null) as Record<string, unknown> : new EmptyObject()
  for (const [key, value] of entries) {
    if (key in parsed) {
      const current = parsed[key]
      if (Array.isArray(current)) current.push(value)
      else parsed[key] = [current, value]
    } else {
      parsed[key] = value
    }
  }
  return parsed
}

/** Bytes as h3 2.x hands them out: a plain Uint8Array (a view of a Buffer's memory, not a copy). */
function plainBytes (bytes: Uint8Array): Uint8Array {
  return bytes.constructor === Uint8Array ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

function isUrlencoded (contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.toLowerCase().startsWith('application/x-www-form-urlencoded')
}

function isMultipart (contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.toLowerCase().startsWith('multipart/form-data')
}

function hasProp (target: object, key: symbol): boolean {
  try {
    return key in target
  } catch {
    return false
  }
}
