// bodykit/h3's readers over the Web build (bodykit/web): a Request's bytes and forms read with no Node built-in, fields kept in order.
import type { FormField } from '../multipart/fields'
import type { AnyOptions } from '../options'
import type { WebRequest } from '../types'
import { webInternals } from '../web'
import type { WebSettings } from '../web/settings'
import type { H3Build, PartFile } from './adapter'

const utf8 = new TextDecoder()
const { createWebSettings, decodeWebBody, knowsWebCharset, readRequest, shared } = webInternals

/** @internal */
export const webBuild: H3Build = {
  shared,
  bytesSettings: (options: AnyOptions) => createWebSettings('raw', options),
  formSettings (options: AnyOptions) {
    const settings = createWebSettings('multipart', options)
    const form = settings.form as NonNullable<WebSettings['form']>
    // The fields as they came, for bodykit/h3 to list among the files.
    return { ...settings, form: { settings: form.settings, assemble: (fields: readonly FormField[]) => ({ list: fields }) } } satisfies WebSettings
  },
  readBytes: (source, settings) => readRequest(settings as WebSettings, source as WebRequest) as Promise<Uint8Array | undefined>,
  async readForm (source, settings) {
    const read = await readRequest(settings as WebSettings, source as WebRequest) as { fields: { list: FormField[] }, files: PartFile[] } | undefined
    return read === undefined ? undefined : { fields: read.fields.list, files: read.files }
  },
  // No Node request to read in place of the Request.
  untouchedNodeRequest: () => null,
  knowsCharset: knowsWebCharset,
  decode: decodeWebBody,
  // No Buffer here: h3 1.x's bytes are Uint8Arrays, and its encodings are UTF-8's.
  asNodeBytes: (bytes) => bytes,
  nodeText: (bytes) => utf8.decode(bytes)
}
