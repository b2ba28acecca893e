// bodykit/h3's public types: h3's reader signatures, with bodykit's limits as options.
import type { ReadMultipartOptions, StandardSchemaV1 } from '../options'

/**
 * An h3 event: h3 1.x's (its Node request is `event.node.req`) or h3 2.x's (its Web Request is `event.req`). Typed
 * loosely so that both majors' events are accepted without bodykit depending on either's types.
 */
export interface H3Event {
  readonly node?: unknown
  readonly req?: unknown
}

/** The options of readBody and readRawBody: bodykit's limits, with h3's own switches. */
export interface H3BodyOptions {
  /** The most bytes read (after inflation): a number of bytes or a string for `bytes` ('1mb'). Default '100kb'. */
  limit?: number | string | undefined
  /** Whether gzip, deflate and br bodies are inflated (and counted inflated against `limit`); when false they are refused with 415. Default true. */
  inflate?: boolean | undefined
  /** What a JSON body's `__proto__` keys do: 'ignore' (h3's own answer), 'remove' or 'error' (400). Default 'ignore'. */
  onProtoPoisoning?: 'ignore' | 'remove' | 'error' | undefined
  /** The same for `constructor.prototype` keys. Default 'ignore'. */
  onConstructorPoisoning?: 'ignore' | 'remove' | 'error' | undefined
  /** h3 1.x's readBody: whether JSON is read strictly by destr (default: only for a Content-Type of exactly `application/json`). */
  strict?: boolean | undefined
  /** h3 2.x's readBody: read the body as 'json', 'text', 'urlencoded' or 'formData' whatever its Content-Type. */
  type?: 'json' | 'text' | 'urlencoded' | 'formData' | undefined
}

/**
 * The options of the form readers (readFormData, readMultipartFormData), and of createBodyReaders: readBody's, with
 * multipart's limits (files are always read into memory, as h3 reads them). `limit` is multipart's default here:
 * room for every file at its size limit.
 */
export type H3FormOptions = H3BodyOptions & Omit<ReadMultipartOptions, 'type' | 'res' | 'schema' | 'verify' | 'limit' | 'inflate' | 'extended' | 'depth'>

/** One part of a multipart form as h3 lists it: a field has a name and data, a file also a filename and a type. */
export interface MultiPartData<Bytes extends Uint8Array = Uint8Array> {
  data: Bytes
  name?: string
  filename?: string
  type?: string
}

/** A validation function as h3 takes it: returns the value, true (valid), or false (invalid), or throws. */
export type ValidateFunction<T> = (data: unknown) => T | true | false | undefined | Promise<T | true | false | undefined>

/** readValidatedBody's options: h3 2.x's `onError`, and readBody's. */
export interface H3ValidateOptions extends H3BodyOptions {
  /** h3 2.x: what a failed validation throws instead of its 400. */
  onError?: ((result: unknown) => unknown) | undefined
}

/** The readers, bound to options given once (createBodyReaders), with h3's own arguments. */
export interface H3BodyReaders {
  /** Reads and parses the body as the event's h3 does (JSON, a form, text), within the limits. */
  readBody: <T = any>(event: H3Event, options?: Pick<H3BodyOptions, 'strict' | 'type'> | null) => Promise<T> // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The body as text (in a Node encoding, for h3 1.x) or, with `false`, as bytes; h3's undefined (1.x) or empty body (2.x) when there is none. */
  readRawBody: {
    (event: H3Event, encoding?: string): Promise<string | undefined>
    (event: H3Event, encoding: false): Promise<Uint8Array | undefined>
  }
  /** readBody, then `validate` (a function or a Standard Schema) as h3 validates: a 400 h3 error when it fails. */
  readValidatedBody: <T = any>(event: H3Event, validate: ValidateFunction<T> | StandardSchemaV1<unknown, T>, options?: Pick<H3ValidateOptions, 'onError'> | null) => Promise<T> // eslint-disable-line @typescript-eslint/no-explicit-any
  /** A form (multipart or urlencoded) as a Web FormData, within the limits. */
  readFormData: (event: H3Event) => Promise<FormData>
  /** A multipart form's parts in order, as h3 1.x lists them; undefined when the request has no multipart body. */
  readMultipartFormData: (event: H3Event) => Promise<MultiPartData[] | undefined>
}

/** bodykit/h3's readers: h3's, with bodykit's options as an optional last argument, and a factory that binds options once. */
export interface H3Readers {
  /** Reads and parses the body as the event's h3 does (JSON, a form, text), within the limits (100 KiB by default). */
  readBody: <T = any>(event: H3Event, options?: H3BodyOptions | null) => Promise<T> // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The body as text (a Node encoding's, for h3 1.x) or, with `false`, as bytes, within the limits; h3's answer when there is none. */
  readRawBody: {
    (event: H3Event, encoding?: string, options?: H3BodyOptions | null): Promise<string | undefined>
    (event: H3Event, encoding: false, options?: H3BodyOptions | null): Promise<Uint8Array | undefined>
  }
  /** readBody, then `validate` (a function or a Standard Schema) as h3 validates: a 400 h3 error when it fails. */
  readValidatedBody: <T = any>(event: H3Event, validate: ValidateFunction<T> | StandardSchemaV1<unknown, T>, options?: H3ValidateOptions | null) => Promise<T> // eslint-disable-line @typescript-eslint/no-explicit-any
  /** A form (multipart or urlencoded) as a Web FormData, within multipart's limits. */
  readFormData: (event: H3Event, options?: H3FormOptions | null) => Promise<FormData>
  /** A multipart form's parts in order, as h3 lists them (undefined in h3 1.x without a multipart body), within multipart's limits. */
  readMultipartFormData: (event: H3Event, options?: H3FormOptions | null) => Promise<MultiPartData[] | undefined>
  /** The five readers bound to `options`, checked now (a bad option throws its TypeError here). */
  createBodyReaders: (options?: H3FormOptions | null) => H3BodyReaders
}
