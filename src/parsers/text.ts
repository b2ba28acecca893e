// The text parser: the body decoded with its charset (any charset iconv-lite knows).
import type { ParserDefinition } from './definition'

/** text(): `req.body` is the decoded string. */
export const textDefinition: ParserDefinition = {
  name: 'text',
  defaultType: 'text/plain',
  acceptsCharset: () => () => true,
  createParse: () => (body: string) => body
}
