// multer 2.x's behaviour as a variant, for bodykit/multer: the default entry's request handling, with no charset
// codec (a multipart stage decodes no body whole), so that the entry loads none.
import { readContentTypeStrictly } from '../content-type'
import { allDecompressors, allInflatersAtOnce, setBody, setRawBody, type Variant } from '../variant'

/** multer reads no body whole: no charset is asked about or decoded (a stage's reads have none). */
function noCharsetCodec (): never {
  throw new Error('bodykit/multer decodes no body whole')
}

/**
 * multer 2.x's behaviour, for `bodykit/multer`: the default entry's reading, but `req.body` is left alone when
 * nothing is read (multer sets it only for a multipart body) and the upload fills `req.body` and the files itself.
 */
export const multerVariant: Variant = {
  // compat(multer): multer reads whatever stream it is given. A stream another reader consumed (its readable side
  // ended) or destroyed is passed on, since nothing will come; a stream whose writable side ended but whose data is
  // unread (a test's PassThrough, written before the call) is read, which on-finished would count as finished.
  isAlreadyRead: (req) => req.readableEnded === true || req.destroyed === true,
  prepareBody: () => {},
  markRead: () => {},
  currentBody: (req) => req.body,
  deliverBody: setBody,
  keepRawBody: setRawBody,
  deliverForm: (_req, next) => { next() },
  // compat(multer): type-is 1.x matches the type, as for body-parser 1.x: a Content-Type it cannot parse is no multipart.
  readContentType: readContentTypeStrictly,
  decompressors: allDecompressors,
  inflatersAtOnce: allInflatersAtOnce,
  knowsCharset: noCharsetCodec,
  decode: noCharsetCodec,
  // multer reads every body busboy can; HTTP/2 bodies without a length included.
  readsHttp2WithoutLength: true,
  charsetErrorFirst: true,
  defaultCharsetParsers: new Set(),
  urlencoded: {
    charsets: ['utf-8'],
    isExtended: () => false,
    warnWhenExtendedUndefined: false,
    simpleIsQuerystring: false,
    charsetOptions: false
  }
}
