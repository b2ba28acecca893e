// Entry `bodykit/hono` where there is no Node (Workers, edge runtimes, browsers: the package's edge-light, workerd, worker and browser conditions): the same middlewares over the Web build's readers.
import { HTTPException } from 'hono/http-exception'
import * as adapter from './hono/adapter.js'
import { webBuild } from './hono/web-build.js'
import type { WebUploadedFile } from './web/types.js'

/** The middlewares of the Web build: bytes as Uint8Array, files in memory. */
export type WebHonoParsers = adapter.HonoParsers<Uint8Array, WebUploadedFile>

const parsers = adapter.createHonoParsers<Uint8Array, WebUploadedFile>(HTTPException, webBuild)

/** JSON bodies as `readJson()` of bodykit/web reads them, into `c.req.valid('json')`. */
export const json: WebHonoParsers['json'] = parsers.json
/** Forms as `readUrlencoded()` of bodykit/web reads them, into `c.req.valid('form')`. */
export const urlencoded: WebHonoParsers['urlencoded'] = parsers.urlencoded
/** Multipart forms as `readMultipart()` of bodykit/web reads them: fields in `c.req.valid('form')`, files (in memory) in `c.var.files`. */
export const multipart: WebHonoParsers['multipart'] = parsers.multipart
/** Text bodies as `readText()` of bodykit/web reads them, into `c.var.body`. */
export const text: WebHonoParsers['text'] = parsers.text
/** Bodies as bytes (a Uint8Array) as `readRaw()` of bodykit/web reads them, into `c.var.body`. */
export const raw: WebHonoParsers['raw'] = parsers.raw

export type { BodyVariables, FilesVariables, HonoJsonOptions, HonoMultipartOptions, HonoParsers, HonoRawOptions, HonoTextOptions, HonoUrlencodedOptions, SchemaInputFor, Validated } from './hono/adapter.js'
export type { WebUploadedFile } from './web/types.js'
