// Turns a variant into the public factories: options validated once, then one read.ts pipeline per request.
import type { JsonOptions, MultipartOptions, RawOptions, TextOptions, UrlencodedOptions, AnyOptions } from './options'
import { readBody } from './read'
import { createReadSettings } from './read-settings'
import { loadDefinition } from './parsers/catalog'
import type { Middleware } from './types'
import type { Variant } from './variants'

/** The factories of one variant. */
export interface Factories {
  multipart: (options?: MultipartOptions | null) => Middleware
  json: (options?: JsonOptions | null) => Middleware
  raw: (options?: RawOptions | null) => Middleware
  text: (options?: TextOptions | null) => Middleware
  urlencoded: (options?: UrlencodedOptions | null) => Middleware
}

/**
 * Builds the factories of a variant; each middleware is a named function, as Express shows `fn.name`. A parser's
 * code (and what it depends on: qs, busboy...) is loaded when its first middleware is created.
 */
export function createFactories (variant: Variant): Factories {
  return {
    json (options) {
      const settings = createReadSettings(loadDefinition('json'), options as AnyOptions, variant)
      return function jsonParser (req, res, next) { readBody(settings, req, res, next) }
    },
    raw (options) {
      const settings = createReadSettings(loadDefinition('raw'), options as AnyOptions, variant)
      return function rawParser (req, res, next) { readBody(settings, req, res, next) }
    },
    text (options) {
      const settings = createReadSettings(loadDefinition('text'), options as AnyOptions, variant)
      return function textParser (req, res, next) { readBody(settings, req, res, next) }
    },
    multipart (options) {
      const settings = createReadSettings(loadDefinition('multipart'), options as AnyOptions, variant)
      return function multipartParser (req, res, next) { readBody(settings, req, res, next) }
    },
    urlencoded (options) {
      const settings = createReadSettings(loadDefinition('urlencoded'), options as AnyOptions, variant)
      return function urlencodedParser (req, res, next) { readBody(settings, req, res, next) }
    }
  }
}
