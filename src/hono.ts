// Entry `bodykit/hono` (CommonJS): Hono middleware per parser (json, text, raw, urlencoded, multipart) over the promise readers.
import { HTTPException } from 'hono/http-exception'
import type { UploadedFile } from './types'
import { createHonoParsers, type HonoParsers } from './hono/adapter'
import { nodeBuild } from './hono/node-build'

const parsers = createHonoParsers<Buffer, UploadedFile>(HTTPException, nodeBuild)

/**
 * Reads a JSON body (`application/json` by default) with the limits, inflation and charset rules of `readJson()`;
 * the handler gets it as `c.req.valid('json')` (`undefined` when there was nothing to read), or, with `schema`,
 * the schema's output, typed as it. A refused body throws Hono's `HTTPException` (413, 415, 400...) with the
 * bodykit error as `cause`, and the handler does not run.
 * @example
 * app.post('/users', json({ limit: '10kb', schema: User }), (c) => c.json({ name: c.req.valid('json').name }))
 */
export const json: HonoParsers['json'] = parsers.json
/**
 * Reads a form (`application/x-www-form-urlencoded` by default) as `readUrlencoded()` does; the handler gets it
 * as `c.req.valid('form')` (`undefined` when there was nothing to read), or the `schema`'s output.
 * @example
 * app.post('/login', urlencoded({ parameterLimit: 20 }), (c) => c.text(String(c.req.valid('form')?.user)))
 */
export const urlencoded: HonoParsers['urlencoded'] = parsers.urlencoded
/**
 * Reads a `multipart/form-data` form as `readMultipart()` does: its fields (what `schema` checks) are
 * `c.req.valid('form')`, as `urlencoded()` gives them, and its files `c.var.files` (`[]` when there are none).
 * Disk files the handler did not move are removed once it has returned.
 * @example
 * app.post('/avatar', multipart({ files: { fieldNames: ['avatar'] } }), (c) => c.json({ size: c.var.files[0]?.size }))
 */
export const multipart: HonoParsers['multipart'] = parsers.multipart
/**
 * Decodes a text body (`text/plain` by default) as `readText()` does, into the context variable `c.var.body`
 * (`undefined` when there was nothing to read), or the `schema`'s output.
 * @example
 * app.post('/note', text({ type: 'text/*' }), (c) => c.text(c.var.body ?? ''))
 */
export const text: HonoParsers['text'] = parsers.text
/**
 * Reads a body (`application/octet-stream` by default) into a Buffer as `readRaw()` does, into `c.var.body`
 * (`undefined` when there was nothing to read), or the `schema`'s output.
 * @example
 * app.post('/hook', raw({ type: 'application/json' }), (c) => c.text(String(c.var.body?.length)))
 */
export const raw: HonoParsers['raw'] = parsers.raw

export type { BodyVariables, FilesVariables, HonoJsonOptions, HonoMultipartOptions, HonoParsers, HonoRawOptions, HonoTextOptions, HonoUrlencodedOptions, SchemaInputFor, Validated } from './hono/adapter'
export type { UploadedFile } from './types'
