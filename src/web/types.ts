// The Web build's public types: the readers' options without what needs Node (a response, disk files, read-off budgets), and their results.
import type { JsonOptions, MultipartOptions, PoisoningAction, RawOptions, StandardSchemaV1, TextOptions, UrlencodedOptions } from '../options'
import type { BodyFor, SchemaOutput, WebRequest } from '../types'

export type { PoisoningAction, StandardSchemaV1, WebRequest }

/** `verify` in the Web build: given the Request, no response, and the body's bytes (after inflation) before decoding. */
export type WebVerify = (request: WebRequest, res: undefined, bytes: Uint8Array, encoding: string | null) => void

/** A `type` option: media types, extension names from the Web build's table, or a function of the Request. */
export type WebTypeOption = string | readonly string[] | ((request: WebRequest) => boolean)

/** What every Web reader's options leave out of the Node readers' (`res`, the read-off budget: a Request has no connection). */
type NodeOnly = 'verify' | 'type' | 'rawBody' | 'discardLimit' | 'discardTime' | 'readHttp2WithoutLength' | 'res'

/** Options of the Web build's readers that read the body whole. */
export type WebOptions<Options> = Omit<Options, NodeOnly> & { type?: WebTypeOption | undefined, verify?: WebVerify | undefined }

/** Options of {@link readJson} in the Web build. */
export type WebJsonOptions = WebOptions<JsonOptions>
/** Options of {@link readRaw} in the Web build. */
export type WebRawOptions = WebOptions<RawOptions>
/** Options of {@link readText} in the Web build. */
export type WebTextOptions = WebOptions<TextOptions>
/** Options of {@link readUrlencoded} in the Web build. */
export type WebUrlencodedOptions = WebOptions<UrlencodedOptions>
/** Options of {@link readMultipart} in the Web build: files are kept in memory (`storage: 'memory'`, the default). */
export type WebMultipartOptions = Omit<MultipartOptions, 'type' | 'files' | 'discardLimit' | 'discardTime' | 'readHttp2WithoutLength'> & {
  type?: WebTypeOption | undefined
  files?: boolean | { storage?: 'memory' | undefined, fileSizeLimit?: number | string | undefined, fileLimit?: number | undefined, fieldNames?: readonly string[] | undefined } | undefined
}

/** A file of a form read by the Web build: as the Node build's memory storage gives it, with its bytes as a Uint8Array. */
export interface WebUploadedFile {
  /** The form field it came in. */
  fieldName: string
  /** The client's file name (base name only): data to show, never a path to use. */
  originalName: string
  /** The part's Content-Type (`application/octet-stream` when it had none). */
  mimeType: string
  /** The part's Content-Transfer-Encoding (`7bit` when it had none), as sent. */
  encoding: string
  /** Its size in bytes. */
  size: number
  /** The file's bytes. */
  buffer: Uint8Array
}

/** What the Web build's readMultipart resolves with. */
export interface WebMultipartResult<Fields = Record<string, unknown>> {
  fields: Fields
  files: WebUploadedFile[]
}

/** A Web reader: resolves with the schema's output when `options.schema` is a schema the compiler sees, else `Body`. */
export type WebReader<Body, Options> = <S extends StandardSchemaV1 | undefined = undefined> (request: WebRequest,
  options?: (Omit<Options, 'schema'> & { schema?: S }) | null) => Promise<BodyFor<S, Body>>

/** The Web multipart reader: `{ fields, files }`, `undefined` when there is nothing to read (with a schema, always a form). */
export type WebFormReaderFunction = <S extends StandardSchemaV1 | undefined = undefined> (request: WebRequest,
  options?: (Omit<WebMultipartOptions, 'schema'> & { schema?: S }) | null) => Promise<WebFormFor<S>>

/** What the Web multipart reader resolves with for a schema of type `S`. */
export type WebFormFor<S> = [S] extends [undefined] ? WebMultipartResult | undefined
  : StandardSchemaV1 extends S ? WebMultipartResult | undefined : WebMultipartResult<SchemaOutput<S>>
