// The Nest exception an upload error becomes, as @nestjs/platform-express maps multer's and busboy's errors.
import { BadRequestException, HttpException, PayloadTooLargeException } from '@nestjs/common'
import { MESSAGES } from '../multer/multer-error'

/** How an error is answered: 413, 400 with the field after its message, 400 as it is, or 400 under "Multipart: ". */
type Answer = 'tooLarge' | 'badField' | 'badRequest' | 'badMultipart'

/**
 * The codes Nest maps, by the message multer gives each. STREAM_DESTROYED is not one: Nest leaves it alone, as a
 * storage engine's failure.
 */
const MESSAGE_OF_CODE: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(MESSAGES).filter(([code]) => code !== 'STREAM_DESTROYED'))

/** The answer to each of those messages, and to busboy's messages for a malformed body. */
const ANSWER_OF_MESSAGE: ReadonlyMap<string, Answer> = new Map<string, Answer>([
  ...Object.values(MESSAGE_OF_CODE).map((message): [string, Answer] => [message, message === 'File too large' ? 'tooLarge' : 'badField']),
  ['Multipart: Boundary not found', 'badRequest'],
  ['Malformed part header', 'badMultipart'],
  ['Unexpected end of form', 'badMultipart'],
  ['Unexpected end of file', 'badMultipart']
])

/**
 * The exception Nest answers for an upload error: a MulterError by its `code` (messages changed between multer
 * releases), any other error by its message; anything else (an HttpException, a fileFilter's own error) is left as
 * it is. compat(nest): an error with no code, whose message is one of multer's, is mapped as well.
 */
export function toNestException (error: unknown): unknown {
  if (!error || error instanceof HttpException) return error
  const { code, message, field } = error as { code?: unknown, message?: unknown, field?: unknown }
  const key = typeof code === 'string' && Object.hasOwn(MESSAGE_OF_CODE, code) ? MESSAGE_OF_CODE[code] : message
  switch (typeof key === 'string' ? ANSWER_OF_MESSAGE.get(key) : undefined) {
    case 'tooLarge': return new PayloadTooLargeException(message)
    case 'badField': return new BadRequestException(field ? `${message} - ${field}` : message)
    case 'badRequest': return new BadRequestException(message)
    case 'badMultipart': return new BadRequestException(`Multipart: ${message}`)
    default: return error
  }
}
