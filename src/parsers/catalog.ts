// Each parser's definition, loaded when the first middleware or reader of its kind is created (not when an entry loads).
/* eslint-disable @typescript-eslint/no-require-imports */
import type { ParserDefinition, StreamParserDefinition } from './definition'
import type { ParserName } from '../variants'

/** The definition each kind loads: multipart reads a stream, the others read the body whole. */
interface Definitions {
  json: ParserDefinition
  raw: ParserDefinition
  text: ParserDefinition
  urlencoded: ParserDefinition
  multipart: StreamParserDefinition
}

/** Each kind's module, required on demand: a JSON-only app never loads qs, busboy or the multipart stage. */
const loaders: { [K in ParserName]: () => Definitions[K] } = {
  json: () => (require('./json') as typeof import('./json')).jsonDefinition,
  raw: () => (require('./raw') as typeof import('./raw')).rawDefinition,
  text: () => (require('./text') as typeof import('./text')).textDefinition,
  urlencoded: () => (require('./node-forms') as typeof import('./node-forms')).urlencodedDefinition,
  multipart: () => (require('./multipart') as typeof import('./multipart')).multipartDefinition
}

/** The definition of one parser kind, loading its module the first time. */
export function loadDefinition<K extends ParserName> (kind: K): Definitions[K] {
  return loaders[kind]()
}
