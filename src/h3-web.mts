// Entry `bodykit/h3` where there is no Node (Workers, edge runtimes, browsers: the package's edge-light, workerd, worker and browser conditions): the same readers over the Web build.
import * as h3 from 'h3'
import * as adapter from './h3/adapter.js'
import { webBuild } from './h3/web-build.js'
import type { H3Readers } from './h3/types.js'
import type { BodyParserError } from './types.js'

const readers = adapter.createH3Readers(webBuild, h3 as unknown as adapter.H3Module)

/**
 * Reads and parses the body as the event's h3 does (destr's JSON in h3 1.x, JSON.parse in 2.x, a form as an
 * object, text), with bodykit's limits: 100 KiB unless `limit` says otherwise, gzip/deflate/br inflated and counted.
 * A refused body throws h3's own error (`statusCode`, `statusMessage`, and `data.type`, bodykit's error type).
 * @example
 * export default defineEventHandler(async (event) => ({ name: (await readBody(event, { limit: '1mb' })).name }))
 */
export const readBody: H3Readers['readBody'] = readers.readBody
/**
 * The body as text (or, with `false`, as bytes), within the limits; undefined (h3 1.x) or empty (2.x) without a body.
 * @example
 * const signature = verify(await readRawBody(event, false, { limit: '5mb' }))
 */
export const readRawBody: H3Readers['readRawBody'] = readers.readRawBody
/**
 * readBody, then `validate` (a function or a Standard Schema), as h3 validates it: a 400 h3 error when it fails.
 * @example
 * const user = await readValidatedBody(event, User)
 */
export const readValidatedBody: H3Readers['readValidatedBody'] = readers.readValidatedBody
/**
 * A multipart or urlencoded form as a Web FormData, within multipart's limits (10 files of 10 MiB by default).
 * @example
 * const form = await readFormData(event, { files: { fileSizeLimit: '2mb' } })
 */
export const readFormData: H3Readers['readFormData'] = readers.readFormData
/**
 * A multipart form's parts in order (`{ name, filename, type, data }`), within multipart's limits.
 * @example
 * const parts = await readMultipartFormData(event, { files: { fileLimit: 1 } })
 */
export const readMultipartFormData: H3Readers['readMultipartFormData'] = readers.readMultipartFormData
/**
 * The five readers bound to options, checked now.
 * @example
 * const { readBody } = createBodyReaders({ limit: '1mb', onProtoPoisoning: 'error' })
 */
export const createBodyReaders: H3Readers['createBodyReaders'] = readers.createBodyReaders
/**
 * Whether a value is an error a reader refused the body with, before it became h3's error (h3's error holds it as `cause`).
 * @example
 * if (isBodyParserError(err.cause)) console.warn('refused body:', err.cause.type)
 */
// bodykit/web's own guard: the bundle holds one copy of the errors module.
export const isBodyParserError: (value: unknown) => value is BodyParserError = webBuild.shared.errors.isBodyParserError

export type { H3BodyOptions, H3BodyReaders, H3Event, H3FormOptions, H3Readers, H3ValidateOptions, MultiPartData, ValidateFunction } from './h3/types.js'
export type { BodyParserError, BodyParserErrorType } from './types.js'
