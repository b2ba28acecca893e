// koaBody(): koa-body 7's and 8's options validated once into the pipeline's settings (co-body's readings, as bodyParser()
// reads them, and the multipart stage on disk with formidable's hooks), and its middleware: which requests to read, where the body goes.
import type { ServerResponse } from 'http'
import os from 'os'
import path from 'path'
import bytes from 'bytes'
import { loadCrypto } from '../dependencies'
import { createReadSettings } from '../read-settings'
import type { ReadSettings } from '../read'
import { readWithSettings } from '../readers'
import type { UploadedFile } from '../types'
import { legacy, type Variant } from '../variants'
import { presentFiles } from './formidable-files'
import { createFormidableDefinition, formidableFileOf, type FormidableRules } from './formidable-form'
import { HttpMethodEnum } from './http-methods'
import { asTheLibrariesError, handled } from './middleware'
import { createFormParse, createJsonParse, createKoaDefinition, createKoaVariant, type KoaBody } from './reading'
import type { ErrorHandler, FileFilter, FileNamer, KoaBodyFiles, KoaBodyMethod, KoaBodyMiddleware, KoaBodyOptions, KoaContext, OnFileBegin, OnPart } from './types'


const METHODS: ReadonlySet<string> = new Set(Object.values(HttpMethodEnum))

/** koa-body's defaults where they differ from bodyParser()'s: text is 56kb, and `text/*` is text. */
const DEFAULTS = {
  jsonLimit: '1mb',
  formLimit: '56kb',
  textLimit: '56kb',
  jsonTypes: ['application/json', 'application/json-patch+json', 'application/vnd.api+json', 'application/csp-report', 'application/reports+json'],
  urlencodedTypes: ['urlencoded'],
  textTypes: ['text/*'],
  multipartTypes: ['multipart'],
  parsedMethods: ['POST', 'PUT', 'PATCH']
} as const

/** The formidable options read; `multiples` is taken and ignored (koa-body always sets it), `allowEmptyFiles` only as true, `minFileSize` only as 0. */
const FORMIDABLE_OPTIONS = new Set(['uploadDir', 'maxFileSize', 'maxFiles', 'maxFields', 'maxTotalFileSize', 'maxFieldsSize', 'hashAlgorithm', 'keepExtensions',
  'onPart', 'filter', 'filename', 'onFileBegin', 'multiples', 'allowEmptyFiles', 'minFileSize'])

/** bodykit's default `maxFileSize` (formidable's is 200 MiB), which is also `maxTotalFileSize`'s when neither is given. */
const DEFAULT_FILE_SIZE = 10 * 1024 * 1024
/** formidable's default `maxFieldsSize`. */
const DEFAULT_FIELDS_SIZE = 20 * 1024 * 1024

/** One kind of body: the types that pick it, and its reading. */
interface Kind {
  readonly types: string[]
  readonly read: ReadSettings
  readonly multipart: boolean
}

/** Everything koaBody()'s middleware reads per request. */
interface KoaBodySettings {
  /** The enabled kinds, in koa-body's order of matching: json, urlencoded, text, multipart. */
  readonly kinds: readonly Kind[]
  readonly methods: ReadonlySet<string>
  readonly patchKoa: boolean
  readonly patchNode: boolean
  readonly includeUnparsed: boolean
  readonly onError: ErrorHandler | null
  readonly removeFilesAfterResponse: boolean
}

/** What the multipart reading resolves with. */
interface Form {
  readonly fields: Record<string, unknown>
  readonly files: readonly UploadedFile[]
}

function readSwitch (options: Record<string, unknown>, name: string, fallback: boolean, prefix = ''): boolean {
  const value = options[name]
  if (value === undefined) return fallback
  if (typeof value !== 'boolean') throw new TypeError('option ' + prefix + name + ' must be a boolean')
  return value
}

function readLimit (options: Record<string, unknown>, name: 'jsonLimit' | 'formLimit' | 'textLimit'): number {
  const value = options[name] ?? DEFAULTS[name]
  const limit = typeof value === 'string' || typeof value === 'number' ? bytes.parse(value) : null
  if (limit === null || !(limit >= 0)) throw new TypeError('option ' + name + ' "' + String(value) + '" is invalid')
  return limit
}

function readTypes (options: Record<string, unknown>, name: 'jsonTypes' | 'urlencodedTypes' | 'textTypes' | 'multipartTypes'): string[] {
  const value = options[name] ?? DEFAULTS[name]
  if (!Array.isArray(value) || !value.every((type) => typeof type === 'string')) throw new TypeError('option ' + name + ' must be a list of media types')
  return [...value]
}

function readFunction<T> (options: Record<string, unknown>, name: string, prefix = ''): T | null {
  const value = options[name]
  if (value === undefined) return null
  if (typeof value !== 'function') throw new TypeError('option ' + prefix + name + ' must be a function')
  return value as T
}

function readMethods (value: unknown): ReadonlySet<string> {
  if (value === undefined) return new Set(DEFAULTS.parsedMethods)
  if (!Array.isArray(value) || !value.every((method) => METHODS.has(method))) {
    throw new TypeError('option parsedMethods must be a list of HttpMethodEnum values (' + [...METHODS].join(', ') + ')')
  }
  return new Set(value as KoaBodyMethod[])
}

/** The formidable options as the multipart stage's (disk storage in `uploadDir`, bodykit's finite defaults) and its hooks'. */
function readFormidable (value: unknown): { stage: Record<string, unknown>, rules: FormidableRules } {
  if (value !== undefined && (value === null || typeof value !== 'object')) throw new TypeError('option formidable must be an object')
  const given = (value ?? {}) as Record<string, unknown>
  const unknown = Object.keys(given).find((name) => given[name] !== undefined && !FORMIDABLE_OPTIONS.has(name))
  if (unknown !== undefined) throw new TypeError('option formidable.' + unknown + ' is not supported by bodykit/koa (docs/koa.md lists the formidable options it reads)')
  // compat(koa-body): formidable refuses a form with an empty file (a browser's file input left empty) with a 500
  // unless `allowEmptyFiles: true` and `minFileSize: 0`; bodykit keeps such files, so only that value means what it says.
  if (given.allowEmptyFiles !== undefined && given.allowEmptyFiles !== true) throw new TypeError('option formidable.allowEmptyFiles: bodykit/koa keeps empty files (as with true); refuse them in your handler (file.size === 0)')
  if (given.minFileSize !== undefined && given.minFileSize !== 0) throw new TypeError('option formidable.minFileSize: bodykit/koa keeps files of any size (as with 0); refuse small ones in your handler (file.size)')
  const uploadDir = given.uploadDir ?? os.tmpdir()
  if (typeof uploadDir !== 'string' || uploadDir === '') throw new TypeError('option formidable.uploadDir must be a folder path')
  const count = (name: string): unknown => {
    const option = given[name]
    if (option !== undefined && (typeof option !== 'number' || !(option >= 1) || (option !== Infinity && !Number.isInteger(option)))) throw new TypeError('option formidable.' + name + ' must be a whole number of at least 1')
    return option
  }
  const size = (name: string): number | undefined => {
    const option = given[name]
    if (option !== undefined && (typeof option !== 'number' || !(option >= 0))) throw new TypeError('option formidable.' + name + ' must be a number of bytes')
    return option as number | undefined
  }
  const maxFileSize = size('maxFileSize')
  // compat(formidable): a falsy maxTotalFileSize is maxFileSize.
  const maxTotalFileSize = size('maxTotalFileSize') || (maxFileSize ?? DEFAULT_FILE_SIZE)
  return {
    // The stage validates these again, naming its own options; the checks above name formidable's.
    stage: { files: { storage: 'disk', directory: uploadDir, fileSizeLimit: maxFileSize, fileLimit: count('maxFiles') }, parameterLimit: count('maxFields') },
    rules: {
      uploadDir: path.resolve(uploadDir),
      keepExtensions: readSwitch(given, 'keepExtensions', false, 'formidable.'),
      onPart: readFunction<OnPart>(given, 'onPart', 'formidable.'),
      filter: readFunction<FileFilter>(given, 'filter', 'formidable.'),
      filename: readFunction<FileNamer>(given, 'filename', 'formidable.'),
      onFileBegin: readFunction<OnFileBegin>(given, 'onFileBegin', 'formidable.'),
      hashAlgorithm: readHashAlgorithm(given.hashAlgorithm),
      maxTotalFileSize,
      maxFieldsSize: size('maxFieldsSize') ?? DEFAULT_FIELDS_SIZE
    }
  }
}

/** `hashAlgorithm`: false, or an algorithm node:crypto hashes with (formidable would fail on the first file). */
function readHashAlgorithm (value: unknown): string | false {
  if (value === undefined || value === false) return false
  if (typeof value === 'string' && canHash(value)) return value
  throw new TypeError('option formidable.hashAlgorithm must be false or a hash algorithm node:crypto knows (such as sha1)')
}

function canHash (algorithm: string): boolean {
  try {
    loadCrypto().createHash(algorithm)
    return true
  } catch {
    return false
  }
}

/** Validates `options` (a TypeError naming the option) and fixes the middleware's settings. */
function createKoaBodySettings (options: KoaBodyOptions | null | undefined): KoaBodySettings {
  if (options !== undefined && options !== null && typeof options !== 'object') throw new TypeError('options must be an object')
  const given = (options ?? {}) as Record<string, unknown>
  const encoding = given.encoding ?? 'utf-8'
  if (typeof encoding !== 'string' || !legacy.knowsCharset(encoding)) throw new TypeError('option encoding "' + String(encoding) + '" is not a charset bodykit can decode')
  const queryString = given.queryString ?? {}
  if (typeof queryString !== 'object' || queryString === null) throw new TypeError('option queryString must be an object of qs options')
  const variant = createKoaVariant(false, false)
  const common = { type: readEveryRequest, defaultCharset: encoding.toLowerCase(), discardLimit: given.discardLimit, discardTime: given.discardTime }
  const kinds: Kind[] = []
  if (readSwitch(given, 'json', true)) {
    const parse = createJsonParse({ strict: readSwitch(given, 'jsonStrict', true), onProtoPoisoning: 'error', onConstructorPoisoning: 'ignore' })
    kinds.push({ types: readTypes(given, 'jsonTypes'), read: createReadSettings(createKoaDefinition('json', parse, false), { ...common, limit: readLimit(given, 'jsonLimit') }, variant), multipart: false })
  }
  if (readSwitch(given, 'urlencoded', true)) {
    const parse = createFormParse(queryString as Record<string, unknown>, false)
    kinds.push({ types: readTypes(given, 'urlencodedTypes'), read: createReadSettings(createKoaDefinition('form', parse, false), { ...common, limit: readLimit(given, 'formLimit') }, variant), multipart: false })
  }
  if (readSwitch(given, 'text', true)) {
    kinds.push({ types: readTypes(given, 'textTypes'), read: createReadSettings(createKoaDefinition('text', (text) => text, false), { ...common, limit: readLimit(given, 'textLimit') }, variant), multipart: false })
  }
  const formidable = readFormidable(given.formidable)
  if (readSwitch(given, 'multipart', false)) {
    const formVariant: Variant = { ...variant, deliverForm: (_req, next, fields, files) => { (next as (err: null, form: Form) => void)(null, { fields: fields as Form['fields'], files: (files ?? []) as UploadedFile[] }) } }
    const definition = createFormidableDefinition(formidable.rules)
    kinds.push({ types: readTypes(given, 'multipartTypes'), read: createReadSettings(definition, { ...formidable.stage, type: readEveryRequest, discardLimit: given.discardLimit, discardTime: given.discardTime }, formVariant), multipart: true })
  }
  return {
    kinds,
    methods: readMethods(given.parsedMethods),
    patchKoa: readSwitch(given, 'patchKoa', true),
    patchNode: readSwitch(given, 'patchNode', false),
    includeUnparsed: readSwitch(given, 'includeUnparsed', false),
    onError: readFunction<ErrorHandler>(given, 'onError'),
    removeFilesAfterResponse: readSwitch(given, 'removeFilesAfterResponse', false)
  }
}

/** The middleware picks the requests to read; the pipeline reads each it is given. */
function readEveryRequest (): boolean {
  return true
}

/** What one reading gives: the body, the text it came from (not for multipart), the files (multipart only). */
interface Result {
  body: unknown
  raw: string | undefined
  files: KoaBodyFiles | undefined
}

/** Builds koaBody()'s middleware. */
export function createKoaBody (options: KoaBodyOptions | null | undefined): KoaBodyMiddleware {
  const settings = createKoaBodySettings(options)
  const { kinds, methods, patchKoa, patchNode, includeUnparsed, onError } = settings

  async function read (ctx: KoaContext, kind: Kind): Promise<Result> {
    const body = await readWithSettings(kind.read, ctx.req, ctx.res)
    if (kind.multipart) {
      const form = body as Form | undefined
      return { body: form?.fields ?? {}, raw: undefined, files: form === undefined ? {} : presentFiles(form.files, formidableFileOf, settings.removeFilesAfterResponse, ctx.res as ServerResponse) }
    }
    // An empty body: co-body parses an empty text.
    const { parsed, raw } = (body ?? kind.read.parse('' as string & Buffer, null)) as KoaBody
    return { body: parsed, raw, files: undefined }
  }

  function patch (target: { body?: unknown, rawBody?: unknown, files?: unknown }, result: Result, multipart: boolean): void {
    target.body = result.body
    if (multipart) target.files = result.files
    else if (includeUnparsed) target.rawBody = result.raw
  }

  return async function koaBody (ctx, next) {
    if (methods.has(ctx.method.toUpperCase())) {
      // koa-body matches with Koa's `ctx.is()`: a request without a body matches nothing and is left alone.
      const kind = kinds.find((candidate) => Boolean(ctx.request.is(candidate.types)))
      if (kind !== undefined) {
        try {
          const result = await read(ctx, kind)
          if (patchNode) patch(ctx.req as { body?: unknown }, result, kind.multipart)
          if (patchKoa) patch(ctx.request, result, kind.multipart)
        } catch (err) {
          const error = asTheLibrariesError(err, ctx) as Error & { type?: unknown, status?: unknown, httpCode?: unknown }
          // compat(koa-body): formidable's errors carry their status as `httpCode`, where onError handlers read it.
          if (kind.multipart && typeof error.type === 'string' && error.type.startsWith('multipart.')) error.httpCode = error.status
          if (onError === null) throw error
          await handled(onError(error, ctx))
        }
      }
    }
    return next()
  }
}
