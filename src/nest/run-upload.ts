// One upload in a Nest interceptor: bodykit/multer's middleware run over the request as a promise, and what
// @nestjs/platform-express does around it (a request whose answer went out first is stopped, array gaps closed,
// files removed once pipes reject the request).
import { finished } from 'stream'
import { catchError, throwError, type MonoTypeOperatorFunction } from 'rxjs'
import { toNestException } from './exceptions'

/** A multer middleware, as the interceptor calls it. */
export type UploadMiddleware = (req: never, res: never, next: (err?: unknown) => void) => void

/** What these functions use of a request; Nest hands over Express's. */
interface UploadRequest {
  complete?: boolean
  destroy?: () => void
  socket?: unknown
  body?: unknown
  file?: unknown
  files?: unknown
}

/** A storage engine's removal, as bodykit/multer's engines (and custom ones) have it. */
export interface RemovingStorage {
  _removeFile (req: never, file: never, callback: (error: Error | null) => void): void
}

/**
 * Runs `middleware` over the request; settles when the body is read, rejecting with the Nest exception of its error.
 * If the response finishes first (an interceptor bound earlier answered, a timeout), the request is destroyed: the
 * route will not run, so what the upload would go on to store must not be stored, and bodykit/multer removes what it
 * stored. Then the arrays of a multipart body lose their gaps.
 */
export async function runUpload (middleware: UploadMiddleware, req: UploadRequest, res: unknown): Promise<void> {
  let reading = true
  const stopWatching = watchResponse(res, () => {
    if (reading && !req.complete && typeof req.destroy === 'function') req.destroy()
  })
  try {
    await new Promise<void>((resolve, reject) => {
      middleware(req as never, res as never, (err) => { if (err) reject(toNestException(err)); else resolve() })
    })
  } finally {
    reading = false
    stopWatching()
  }
  // Only a multipart body (null-prototype, as multer makes it) is touched: a body another parser set stays as it is.
  const { body } = req
  if (typeof body === 'object' && body !== null && Object.getPrototypeOf(body) === null) closeArrayGaps(body)
}

/** Calls `listener` when the response finishes or closes; returns the function that stops watching. */
function watchResponse (res: unknown, listener: () => void): () => void {
  // A stand-in for a response (a unit test's object) is not watched.
  if (typeof (res as { on?: unknown } | null)?.on !== 'function') return () => {}
  try {
    return finished(res as NodeJS.WritableStream, listener)
  } catch {
    return () => {}
  }
}

/**
 * Moves the values of every array in `store` (at any depth) to its first slots, in their order, and cuts it to them.
 * compat(nest): a field name picks its index (`tags[1000]`), and a copy that skips empty slots (class-transformer's,
 * for ValidationPipe) would validate another array than the handler gets. Iterative and driven by the values present,
 * so neither depth nor an index as large as a name can make costs more than the body's size.
 */
export function closeArrayGaps (store: object): void {
  const pending: object[] = [store]
  for (let container = pending.pop(); container !== undefined; container = pending.pop()) {
    const values: unknown[] = Object.values(container)
    if (Array.isArray(container) && values.length < container.length) {
      values.forEach((value, index) => { container[index] = value })
      container.length = values.length
    }
    for (const value of values) {
      if (typeof value === 'object' && value !== null) pending.push(value)
    }
  }
}

/** Set on the request by @nestjs/core (11.2 and later) when the route's pipes refused it; read by its registered name. */
const REJECTED_BY_PIPES = Symbol.for('nestjs:rejected-by-pipes')

/**
 * Passes the handler's error on, and when the route's pipes refused the request (a ParseFilePipe), removes the files
 * stored for it through `storage`: no handler got them, so nothing else would. compat(nest): they are removed once the
 * response is out (an exception filter may still read them) or its connection closed, whichever comes first.
 */
export function removeFilesOnPipeRejection<T> (storage: RemovingStorage, req: UploadRequest, res: unknown): MonoTypeOperatorFunction<T> {
  return catchError((err: unknown) => {
    if ((req as Record<symbol, unknown>)[REJECTED_BY_PIPES] === true) {
      onResponseClose(res, req, () => {
        for (const file of storedFiles(req)) {
          try {
            storage._removeFile(req as never, file as never, () => {})
          } catch {
            // The request failed already: a removal that throws changes nothing for it.
          }
        }
      })
    }
    return throwError(() => err)
  })
}

/** The files on the request: `req.file`, or `req.files` as an array or an object of arrays. */
function storedFiles (req: UploadRequest): unknown[] {
  if (req.file) return [req.file]
  const { files } = req
  if (Array.isArray(files)) return files
  return Object.values(files ?? {}).flat()
}

/** The callbacks waiting for each connection to close: a pipelined connection carries many requests, and one listener. */
const waitingOnConnection = new WeakMap<object, Set<() => void>>()

/**
 * Calls `listener` once, when the response finished or closed, or when the request's connection closed: the response
 * of a pipelined request queued behind others has no socket yet, and `finished()` alone may never report it.
 */
function onResponseClose (res: unknown, req: UploadRequest, listener: () => void): void {
  let waiting: Set<() => void> | undefined
  let called = false
  const settle = (): void => {
    if (called) return
    called = true
    waiting?.delete(settle)
    listener()
  }
  if (typeof (res as { on?: unknown } | null)?.on === 'function') finished(res as NodeJS.WritableStream, settle)
  const connection = req.socket as { once?: unknown, destroyed?: boolean } | null | undefined
  if (typeof connection?.once !== 'function') return
  if (connection.destroyed) {
    // Asynchronously, as finished() reports a response that closed already.
    process.nextTick(settle)
    return
  }
  waiting = waitingOnConnection.get(connection)
  if (!waiting) {
    const callbacks = new Set<() => void>()
    waitingOnConnection.set(connection, callbacks)
    ;(connection as NodeJS.EventEmitter).once('close', () => {
      waitingOnConnection.delete(connection)
      for (const callback of callbacks) callback()
    })
    waiting = callbacks
  }
  waiting.add(settle)
}
