// The extension names a `type` option may use in the Web build: a small table in place of type-is's MIME database.
import type { ExtensionLookup } from '../type-match'

/**
 * Extension → media type, as type-is 2 (mime-db) gives them, for the names body parsing meets: text and data formats
 * an API reads, and the uploads a `raw` parser takes. test/web-build/type-names.test.ts compares each with type-is.
 */
const MEDIA_TYPES: Readonly<Record<string, string>> = {
  json: 'application/json',
  map: 'application/json',
  jsonld: 'application/ld+json',
  geojson: 'application/geo+json',
  webmanifest: 'application/manifest+json',
  xml: 'application/xml',
  xhtml: 'application/xhtml+xml',
  atom: 'application/atom+xml',
  rss: 'application/rss+xml',
  bin: 'application/octet-stream',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  tar: 'application/x-tar',
  wasm: 'application/wasm',
  toml: 'application/toml',
  sql: 'application/sql',
  rtf: 'application/rtf',
  text: 'text/plain',
  txt: 'text/plain',
  html: 'text/html',
  htm: 'text/html',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  css: 'text/css',
  js: 'text/javascript',
  mjs: 'text/javascript',
  md: 'text/markdown',
  yaml: 'text/yaml',
  yml: 'text/yaml',
  ics: 'text/calendar',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  svg: 'image/svg+xml',
  bmp: 'image/bmp',
  tiff: 'image/tiff',
  ico: 'image/vnd.microsoft.icon',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime'
}

/**
 * The media type of an extension name, read as mime-types reads one (its last `.`-separated part, any case). A name
 * the table lacks throws a TypeError when the parser is created: type-is would look it up in a database the Web build
 * does not carry, and a `type` that silently never matches would leave bodies unread.
 */
export const lookupWebExtension: ExtensionLookup = (name) => {
  const extension = name.slice(name.lastIndexOf('.') + 1).toLowerCase()
  const type = Object.hasOwn(MEDIA_TYPES, extension) ? MEDIA_TYPES[extension] : undefined
  if (type === undefined) {
    throw new TypeError('option type "' + name + '" is an extension name the Web build does not know: give the media type (e.g. "application/json")')
  }
  return type
}

/** The extension names the table knows (for its test against type-is). */
export const WEB_EXTENSION_NAMES: readonly string[] = Object.keys(MEDIA_TYPES)
