// bodykit/h3's readers over the Node build: bytes read by the raw parser's pipeline, forms by the one multipart stage with the fields kept in order.
import type { IncomingMessage, ServerResponse } from 'http'
import { readContentTypeLeniently } from '../content-type'
import * as errors from '../errors'
import { createFormPolicy } from '../multipart/form-collector'
import type { FieldAssembler, FormField } from '../multipart/fields'
import { createMultipartStage } from '../multipart/part-reader'
import { normalizeMultipartOptions } from '../multipart/settings'
import type { AnyOptions } from '../options'
import { loadDefinition } from '../parsers/catalog'
import type { StreamParserDefinition } from '../parsers/definition'
import { createPoisoningGuard, readPoisoningAction } from '../parsers/json'
import type { ReadSettings } from '../read'
import { createReadSettings } from '../read-settings'
import { readWithSettings, untouched, untouchedForm } from '../readers'
import type { WebRequest } from '../types'
import { modern } from '../variants'
import type { H3Build, ListedForm, PartFile } from './adapter'

/** The form's fields as they came, for bodykit/h3 to list among the files (instead of assembled into an object). */
const keepFieldList: FieldAssembler = (fields) => ({ list: fields })

/** multipart() with its fields kept as a list: the same stage, limits and errors. */
const listedFormDefinition: StreamParserDefinition = {
  name: 'multipart',
  defaultType: 'multipart/form-data',
  createStage (options) {
    const settings = normalizeMultipartOptions(options)
    return { stage: createMultipartStage(createFormPolicy(settings, keepFieldList)), defaultLimit: settings.defaultLimit }
  }
}

type Source = IncomingMessage | WebRequest

/** @internal */
export const nodeBuild: H3Build = {
  shared: { readContentType: readContentTypeLeniently, errors, createPoisoningGuard, readPoisoningAction },
  bytesSettings: (options: AnyOptions) => createReadSettings(loadDefinition('raw'), options, untouched),
  formSettings: (options: AnyOptions) => createReadSettings(listedFormDefinition, options, untouchedForm),
  readBytes: (source, settings, res) => readWithSettings(settings as ReadSettings, source as Source, res as ServerResponse | undefined) as Promise<Buffer | undefined>,
  async readForm (source, settings, res) {
    const read = await readWithSettings(settings as ReadSettings, source as Source, res as ServerResponse | undefined) as { fields: { list: FormField[] }, files: PartFile[] } | undefined
    return read === undefined ? undefined : { fields: read.fields.list, files: read.files } satisfies ListedForm
  },
  untouchedNodeRequest,
  knowsCharset: modern.knowsCharset,
  decode: (bytes, charset) => modern.decode(asBuffer(bytes), charset),
  asNodeBytes: asBuffer,
  nodeText: (bytes, encoding) => asBuffer(bytes).toString(encoding as BufferEncoding)
}

/**
 * srvx's Node request under h3 2.x's `event.req`, when nothing has touched its body: not used, not read, and no
 * stream of it (srvx makes one on `body`, as h3's bodyLimit() and any middleware reading the Request do, which then
 * listens for its data). Read in its place, by the pipeline's Node reader; srvx then finds it finished, as after a read.
 */
function untouchedNodeRequest (request: Request): IncomingMessage | null {
  const node = (request as { runtime?: { node?: { req?: unknown } } }).runtime?.node?.req as IncomingMessage | undefined
  if (node === undefined || node === null || typeof node.listenerCount !== 'function' || request.bodyUsed) return null
  if (node.readableDidRead || node.readableFlowing === true || node.listenerCount('data') > 0 || node.listenerCount('readable') > 0) return null
  return node
}

/** The same bytes as a Buffer (a view, no copy). */
function asBuffer (bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}
