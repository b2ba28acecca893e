// The raw parser: the body as a Buffer, no charset.
import type { ParserDefinition } from './definition'

/** raw(): `req.body` is the body's Buffer. */
export const rawDefinition: ParserDefinition = {
  name: 'raw',
  defaultType: 'application/octet-stream',
  acceptsCharset: () => null,
  createParse: () => (body: Buffer) => body
}
