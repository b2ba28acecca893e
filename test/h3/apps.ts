// h3 v1 and v2 apps whose handlers read bodies with bodykit's promise API through the error recipes of the h3 section of docs/frameworks.md, h3's own readers beside them, and the clients the h3 suites share.
import { existsSync, mkdtempSync, readdirSync, rmSync, watch } from 'node:fs'
import type { ServerResponse } from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import type { TestContext } from 'node:test'
import zlib from 'node:zlib'
import {
  createApp, createError, createRouter, defineEventHandler, readBody as h3v1ReadBody,
  readMultipartFormData as h3v1ReadMultipartFormData, readRawBody as h3v1ReadRawBody, type H3Event as H3v1Event
} from 'h3'
import {
  H3, HTTPError, readBody as h3v2ReadBody, readFormData as h3v2ReadFormData,
  readMultipartFormData as h3v2ReadMultipartFormData, readRawBody as h3v2ReadRawBody, type H3Event as H3v2Event
} from 'h3-2'
import { isBodyParserError, readJson, readMultipart, readText, readUrlencoded, type MultipartResult } from '../../src/index'
import { jsonParseMessage } from '../helpers/expect'
import { encode, sendHead as sendHeadRaw, type Payload } from '../helpers/server'

/** The JSON, text and form routes' limit. */
export const LIMIT = 64 * 1024
/** The upload route's limit on one file. */
export const FILE_SIZE_LIMIT = 64 * 1024

/** The recipe for h3 v1: a bodykit refusal thrown as h3's own error (its status, its type in `data`); anything else as it came. */
export function h3v1Error (err: unknown): never {
  throw isBodyParserError(err) && err.expose ? createError({ statusCode: err.status, message: err.message, data: { type: err.type } }) : err
}

/** The recipe for h3 v2: a bodykit refusal thrown as an HTTPError (its status, message and type); anything else as it came. */
export function h3v2Error (err: unknown): never {
  throw isBodyParserError(err) && err.expose ? new HTTPError({ status: err.status, message: err.message, data: { type: err.type } }) : err
}

/** How a bodykit read in a handler ended: its value, or the status and type it was refused with. */
export type Outcome = { route: string, ok: true } | { route: string, ok: false, status: unknown, type: unknown, message: unknown }

/** The outcomes of the reads, in order, and a promise of the next one not yet taken (for requests whose client left). */
export interface Recorder {
  readonly outcomes: Outcome[]
  next: () => Promise<Outcome>
  /** Wraps a read: records how it ended, and passes its result or error on. */
  track: <T>(route: string, read: Promise<T>) => Promise<T>
}

function createRecorder (): Recorder {
  const outcomes: Outcome[] = []
  const waiters: Array<(outcome: Outcome) => void> = []
  let taken = 0
  const record = (outcome: Outcome): void => {
    outcomes.push(outcome)
    const waiter = waiters.shift()
    if (waiter) {
      taken++
      waiter(outcome)
    }
  }
  return {
    outcomes,
    next: () => taken < outcomes.length ? Promise.resolve(outcomes[taken++]) : new Promise((resolve) => waiters.push(resolve)),
    track: (route, read) => read.then((value) => {
      record({ route, ok: true })
      return value
    }, (err: unknown) => {
      const e = err as { status?: unknown, type?: unknown, message?: unknown }
      record({ route, ok: false, status: e.status, type: e.type, message: e.message })
      throw err
    })
  }
}

/** What a handler answers for a form: its fields, and each file as stored (still on disk while the handler runs). */
function describeForm (form: MultipartResult | undefined): Payload {
  if (form === undefined) return { form: encode(undefined) }
  return {
    fields: encode(form.fields),
    files: form.files.map(({ fieldName, originalName, mimeType, size, path: filePath }) => ({
      fieldName, originalName, mimeType, size, onDisk: filePath !== undefined && existsSync(filePath)
    }))
  }
}

/** What h3's own JSON reader gave: its type, its own keys and whether `__proto__` is one of them. */
function describeParsed (body: unknown): Payload {
  if (body === null || typeof body !== 'object') return { type: typeof body, value: encode(body) }
  return { type: 'object', keys: Object.keys(body), ownProto: Object.hasOwn(body, '__proto__'), plainPrototype: Object.getPrototypeOf(body) === Object.prototype }
}

/** What h3's multipart reader gave: each part's name, file name and size (its bytes were all in memory). */
function describeParts (parts: Array<{ name?: string, filename?: string, data: Uint8Array }> | undefined): unknown {
  return parts?.map((part) => ({ name: part.name, filename: part.filename, size: part.data.length })) ?? null
}

export interface H3v1App {
  /** The Node listener (`toNodeListener(app)`). */
  app: ReturnType<typeof createApp>
  recorder: Recorder
}

/**
 * An h3 v1 app (createApp, a router, defineEventHandler): bodykit routes reading `event.node.req` with
 * `res: event.node.res`, errors thrown through the recipe (`/as-is/json` throws bodykit's error unchanged), and
 * h3's own readers under `/h3/`.
 */
export function createV1App (uploads: string): H3v1App {
  const recorder = createRecorder()
  const { track } = recorder
  const router = createRouter()
    .post('/json', defineEventHandler(async (event) => {
      const body = await track('/json', readJson(event.node.req, { res: event.node.res, limit: LIMIT, onProtoPoisoning: 'error' })).catch(h3v1Error)
      return { body: encode(body) }
    }))
    .post('/as-is/json', defineEventHandler(async (event) => {
      return { body: encode(await readJson(event.node.req, { res: event.node.res, limit: LIMIT })) }
    }))
    .post('/form', defineEventHandler(async (event) => {
      return { body: encode(await track('/form', readUrlencoded(event.node.req, { res: event.node.res, extended: true })).catch(h3v1Error)) }
    }))
    .post('/text', defineEventHandler(async (event) => {
      return { body: encode(await track('/text', readText(event.node.req, { res: event.node.res, limit: LIMIT })).catch(h3v1Error)) }
    }))
    .post('/upload', defineEventHandler(async (event) => {
      const form = await track('/upload', readMultipart(event.node.req, {
        res: event.node.res,
        files: { storage: 'disk', directory: uploads, fileSizeLimit: FILE_SIZE_LIMIT, fileLimit: 2 }
      })).catch(h3v1Error)
      return describeForm(form)
    }))
    // Disk storage in a folder that does not exist: a 500 bodykit does not expose.
    .post('/upload-nowhere', defineEventHandler(async (event) => {
      const files = { storage: 'disk', directory: path.join(uploads, 'missing') } as const
      return describeForm(await readMultipart(event.node.req, { res: event.node.res, files }).catch(h3v1Error))
    }))
    .post('/h3/body', defineEventHandler(async (event: H3v1Event) => describeParsed(await h3v1ReadBody(event))))
    .post('/h3/raw', defineEventHandler(async (event) => ({ size: (await h3v1ReadRawBody(event, false))?.length ?? null })))
    .post('/h3/multipart', defineEventHandler(async (event) => ({ parts: describeParts(await h3v1ReadMultipartFormData(event)) })))
    .get('/ping', defineEventHandler(() => ({ pong: true })))
  const app = createApp()
  app.use(router)
  return { app, recorder }
}

export interface H3v2App {
  app: H3
  recorder: Recorder
}

/** The Node response under an h3 v2 event, when it runs on Node (srvx hands it over); else undefined. */
function nodeResponseOf (event: H3v2Event): ServerResponse | undefined {
  // srvx types it as HTTP/1 or HTTP/2 compat response; h3 apps on Node use node:http's.
  return event.runtime?.node?.res as ServerResponse | undefined
}

/**
 * An h3 v2 app (H3): bodykit routes reading `event.req` (a Web Request; on Node srvx's own class), with the Node
 * response when there is one, errors thrown through the recipe, and h3's own readers under `/h3/`.
 */
export function createV2App (uploads: string): H3v2App {
  const recorder = createRecorder()
  const { track } = recorder
  const app = new H3()
    .post('/json', async (event) => {
      const body = await track('/json', readJson(event.req, { limit: LIMIT, onProtoPoisoning: 'error' })).catch(h3v2Error)
      return { body: encode(body) }
    })
    .post('/as-is/json', async (event) => ({ body: encode(await readJson(event.req, { limit: LIMIT })) }))
    .post('/form', async (event) => ({ body: encode(await track('/form', readUrlencoded(event.req, { extended: true })).catch(h3v2Error)) }))
    .post('/text', async (event) => ({ body: encode(await track('/text', readText(event.req, { limit: LIMIT })).catch(h3v2Error)) }))
    .post('/upload', async (event) => {
      const form = await track('/upload', readMultipart(event.req, {
        res: nodeResponseOf(event),
        files: { storage: 'disk', directory: uploads, fileSizeLimit: FILE_SIZE_LIMIT, fileLimit: 2 }
      })).catch(h3v2Error)
      return describeForm(form)
    })
    .post('/upload-nowhere', async (event) => {
      const files = { storage: 'disk', directory: path.join(uploads, 'missing') } as const
      return describeForm(await readMultipart(event.req, { files }).catch(h3v2Error))
    })
    .post('/request-class', (event) => {
      const request: unknown = event.req
      return {
        name: (request as object).constructor.name,
        instanceOfRequest: request instanceof Request,
        requestPrototype: Object.getPrototypeOf(request) === Request.prototype,
        inheritsRequest: Object.prototype.isPrototypeOf.call(Request.prototype, request as object),
        runtime: event.runtime?.name ?? null,
        nodeRequest: event.runtime?.node?.req !== undefined
      }
    })
    .post('/h3/body', async (event) => describeParsed(await h3v2ReadBody(event)))
    .post('/h3/raw', async (event) => ({ size: (await h3v2ReadRawBody(event, false))?.length ?? null }))
    .post('/h3/multipart', async (event) => ({ parts: describeParts(await h3v2ReadMultipartFormData(event)) }))
    .post('/h3/form-data', async (event) => {
      const form = await h3v2ReadFormData(event)
      return { entries: [...form.entries()].map(([name, value]) => [name, typeof value === 'string' ? value : value.size]) }
    })
    .get('/ping', () => ({ pong: true }))
  return { app, recorder }
}

/** A temporary folder for disk uploads, removed after the test. */
export function uploadsFolder (t: TestContext): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bodykit-h3-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

/** Resolves once `dir` is empty: at once, or on the file system event that empties it (no polling, no timer). */
export function untilEmpty (t: TestContext, dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const watcher = watch(dir)
    // A test that fails first leaves no watcher behind.
    t.after(() => { watcher.close() })
    const check = (): void => {
      if (readdirSync(dir).length > 0) return
      watcher.close()
      resolve()
    }
    watcher.on('change', check)
    watcher.on('error', (err) => {
      watcher.close()
      reject(err)
    })
    // A file removed before the watch began sends no event: look once now.
    check()
  })
}

/** Resolves with the name of the first file created in `dir` from now on. */
export function firstFileIn (t: TestContext, dir: string): Promise<string> {
  return new Promise((resolve) => {
    const watcher = watch(dir, (_event, name) => {
      if (name === null) return
      watcher.close()
      resolve(name)
    })
    watcher.on('error', () => { watcher.close() })
    t.after(() => { watcher.close() })
  })
}

/** A form with a field and two small text files, encoded as a browser encodes it. */
export async function encodeForm (): Promise<{ contentType: string, body: Buffer }> {
  const form = new FormData()
  form.append('title', 'holiday')
  form.append('photo', new Blob(['first file'], { type: 'text/plain' }), 'a.txt')
  form.append('photo', new Blob(['second'], { type: 'text/plain' }), 'b.txt')
  const request = new Request('http://localhost/', { method: 'POST', body: form })
  return { contentType: request.headers.get('content-type') as string, body: Buffer.from(await request.arrayBuffer()) }
}

const JSON_TYPE = 'application/json'

/** The refusals every route of the recipe answers: headers, body, status, type and message. */
export const REFUSALS: Array<[Record<string, string>, string | Buffer, number, string, string]> = [
  [{ 'content-type': 'application/json; charset=klingon' }, '{}', 415, 'charset.unsupported', 'unsupported charset "KLINGON"'],
  [{ 'content-type': JSON_TYPE, 'content-encoding': 'compress' }, '{}', 415, 'encoding.unsupported', 'unsupported content encoding "compress"'],
  [{ 'content-type': JSON_TYPE }, '{"a":', 400, 'entity.parse.failed', jsonParseMessage('{"a":')],
  // onProtoPoisoning: 'error'
  [{ 'content-type': JSON_TYPE }, '{"__proto__":{"admin":true}}', 400, 'entity.parse.failed', 'Object contains forbidden prototype property'],
  [{ 'content-type': JSON_TYPE }, JSON.stringify({ big: 'x'.repeat(LIMIT) }), 413, 'entity.too.large', 'request entity too large'],
  // A gzip bomb: 50 MiB of spaces in 50 KiB, stopped near the limit.
  [{ 'content-type': JSON_TYPE, 'content-encoding': 'gzip' }, zlib.gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x20)), 413, 'entity.too.large', 'request entity too large']
]

/** What the upload route answers for {@link encodeForm}'s form. */
export const UPLOADED = {
  fields: { title: 'holiday' },
  files: [
    { fieldName: 'photo', originalName: 'a.txt', mimeType: 'text/plain', size: 10, onDisk: true },
    { fieldName: 'photo', originalName: 'b.txt', mimeType: 'text/plain', size: 6, onDisk: true }
  ]
}

export const BOUNDARY = 'h3-bodykit-boundary'
export const FORM_TYPE = 'multipart/form-data; boundary=' + BOUNDARY

/** The head of a file part of {@link FORM_TYPE}, up to its first data byte. */
export function filePartHead (name = 'photo', filename = 'big.bin'): string {
  return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`
}

/** A whole form with one file of `size` bytes. */
export function formWithFile (size: number): Buffer {
  return Buffer.concat([Buffer.from(filePartHead()), Buffer.alloc(size, 0x61), Buffer.from(`\r\n--${BOUNDARY}--\r\n`)])
}

/** A form whose file part never ends (no closing delimiter): malformed. */
export const UNCLOSED_FORM = filePartHead('photo', 'a.txt') + 'abc'

export interface HeadReply {
  status: number
  json: Payload
  /** Body bytes the client had written when the reply came. */
  written: number
}

/** {@link sendHeadRaw}, with the reply's JSON. */
export async function sendHead (port: number, head: string, chunk?: Buffer): Promise<HeadReply> {
  const { status, text, written } = await sendHeadRaw(port, head, chunk)
  return { status, json: JSON.parse(text) as Payload, written }
}

/**
 * Writes a request head and `body` on a TCP socket, then destroys it (a client gone mid-upload) once `whenToLeave`
 * resolves.
 */
export function abortAfter (port: number, head: string, body: string | Buffer, whenToLeave: Promise<unknown>): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.on('error', () => {})
    socket.on('close', () => { resolve() })
    socket.on('connect', () => {
      socket.write(head)
      socket.write(body)
      whenToLeave.then(() => { socket.destroy() }, reject)
    })
  })
}
