// Entry `bodykit/h3` where there is no Node (Workers, edge runtimes, browsers: the package's edge-light, workerd, worker and browser conditions): the same readers over the Web build.
import * as h3 from 'h3'
import * as adapter from './h3/adapter.js'
import { webBuild } from './h3/web-build.js'
import type { H3Readers } from './h3/types.js'
import type { BodyParserError } from './types.js'

const readers = adapter.createH3Readers(webBuild, h3 as unknown as adapter.H3Module)

/** readBody as the Node build's (docs/h3.md), read by bodykit/web: charsets and encodings are the runtime's decoders'. */
export const readBody: H3Readers['readBody'] = readers.readBody
/** readRawBody, bytes as Uint8Arrays. */
export const readRawBody: H3Readers['readRawBody'] = readers.readRawBody
/** readValidatedBody: readBody, then a function or a Standard Schema. */
export const readValidatedBody: H3Readers['readValidatedBody'] = readers.readValidatedBody
/** readFormData: a multipart or urlencoded form as a FormData. */
export const readFormData: H3Readers['readFormData'] = readers.readFormData
/** readMultipartFormData: a multipart form's parts in order, files in memory. */
export const readMultipartFormData: H3Readers['readMultipartFormData'] = readers.readMultipartFormData
/** The five readers bound to options, checked now. */
export const createBodyReaders: H3Readers['createBodyReaders'] = readers.createBodyReaders
/** Whether a value is bodykit's refusal (h3's error holds it as `cause`): bodykit/web's own guard, so the bundle holds one errors module. */
export const isBodyParserError: (value: unknown) => value is BodyParserError = webBuild.shared.errors.isBodyParserError

export type { H3BodyOptions, H3BodyReaders, H3Event, H3FormOptions, H3Readers, H3ValidateOptions, MultiPartData, ValidateFunction } from './h3/types.js'
export type { BodyParserError, BodyParserErrorType } from './types.js'
