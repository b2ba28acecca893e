// The error bodykit/koa throws when created with a kind of body it does not know: @koa/bodyparser 6's, class and message.

/** The kinds of body the Koa parsers know, in the order @koa/bodyparser 6 lists them in its message. */
export const BODY_TYPES = ['json', 'form', 'text', 'xml'] as const

/** A name in `enableTypes`, or a key (or a value that is not a list) in `extendTypes`, that is not a kind of body. */
export class UnsupportedBodyTypeError extends Error {
  constructor (wrongType: unknown) {
    // compat(koa6): the value as a template literal shows it (a Symbol throws a TypeError there, as in 6).
    super(`Invalid enabled type '${wrongType as string}'. make sure to pass an array contains supported types ([${BODY_TYPES.join(',')}]).`)
    this.name = 'UnsupportedBodyTypeError'
  }
}
