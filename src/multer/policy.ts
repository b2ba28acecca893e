// multer's policy over the multipart stage: its limits handed to busboy, fields appended to `req.body` as they
// arrive, files through fileFilter to the storage engine, and on any error every stored file removed before the
// MulterError is reported; one request's state is a MulterUpload.
import { AsyncResource } from 'async_hooks'
import type { Readable } from 'stream'
import type { StageResult } from '../read'
import type { ReadingConfig } from '../multipart/form-reading'
import type { FieldPartInfo, FilePartInfo, PartCollector } from '../multipart/part-collector'
import { GuardedStream } from '../multipart/guarded-stream'
import { readBoundaryType } from '../multipart/part-headers'
import type { FormPolicy } from '../multipart/part-reader'
import type { BodyRequest } from '../variants'
import { appendField, decodeFormName, exceedsArrayIndex, exceedsNesting } from './field-names'
import { thrownByUser } from '../errors'
import { MulterError, asClientError, unreadableFileName } from './multer-error'
import type { MulterFile, StorageEngine } from './storage'

/** multer's `limits` (every key it takes; busboy is given them all, as multer gives them). */
export interface MulterLimits {
  fieldNameSize?: number
  fieldSize?: number
  fields?: number
  fileSize?: number
  files?: number
  parts?: number
  headerPairs?: number
  fieldNestingDepth?: number
  fieldArrayIndexLimit?: number
  [key: string]: number | undefined
}

/** Decides whether a file is stored: `callback(null, true)`, skipped: `callback(null, false)`, or refused: `callback(err)`. */
export type FileFilter = (req: BodyRequest, file: MulterFile, callback: (error: Error | null, acceptFile?: boolean) => void) => void

/** Where files go on the request: `req.file` (VALUE), an array, an object of arrays by field, or nowhere. */
export type FileStrategy = 'NONE' | 'VALUE' | 'ARRAY' | 'OBJECT'

/** What one middleware reads a request with: the instance's options when the request arrives. */
export interface MulterSetup {
  readonly limits: MulterLimits | ((req: BodyRequest) => MulterLimits | null | undefined) | null | undefined
  readonly preservePath: boolean | undefined
  readonly defParamCharset: string
  readonly defCharset: string | undefined
  readonly highWaterMark: number | undefined
  readonly fileHwm: number | undefined
  readonly storage: StorageEngine
  readonly fileFilter: FileFilter
  readonly fileStrategy: FileStrategy
}

/** busboy's default for `fieldSize`, a finite one: multer adjusts it even without limits. */
const DEFAULT_FIELD_SIZE = 1024 * 1024

/**
 * multer rejects a limit busboy would silently ignore (busboy compares with `===`, so '1mb' or NaN would mean
 * "no limit"): a non-negative whole number, Infinity, null or undefined.
 */
export function validateLimits (limits: MulterLimits): void {
  for (const key of Object.keys(limits)) {
    const value = limits[key]
    if (value === null || value === undefined || value === Infinity || (Number.isInteger(value) && value >= 0)) continue
    throw new TypeError('Expected limits.' + key + ' to be a non-negative integer or Infinity')
  }
}

/**
 * The error `busboy({ headers })` throws for a Content-Type, or null when it would read the body as a form: busboy's
 * own Content-Type reading and the checks its constructor makes. test/multer/content-type-check.test.ts draws
 * Content-Types and compares with busboy itself. multer hands only `multipart/*` bodies to busboy.
 */
export function refusalOfBusboy (header: unknown): Error | null {
  if (typeof header !== 'string') return new Error('Missing Content-Type')
  const contentType = readBoundaryType(header)
  if (contentType === null) return new Error('Malformed content type')
  if (contentType.mediaType === 'multipart/form-data') {
    return contentType.parameter !== undefined ? null : new Error('Multipart: Boundary not found')
  }
  return new Error('Unsupported content type: ' + header)
}

/** The multer policy of one middleware; `setup` is read per request, as multer reads its instance. */
export function createMulterPolicy (setup: () => MulterSetup): FormPolicy {
  return {
    check (req) {
      // busboy's own verdict on the Content-Type (multer hands every multipart/* type to it): its error, as multer's.
      const refusal = refusalOfBusboy(req.headers['content-type'])
      if (refusal === null) return null
      // compat(multer): multer sets `req.body` to an empty null-prototype object just before it makes busboy, so
      // an error handler finds one. (A `limits` function that throws comes first there and leaves it untouched,
      // as it does here: it runs when the body is read, and MulterUpload sets `req.body` after it.)
      req.body = Object.create(null)
      return asClientError(refusal)
    },
    begin (req, _res, done) {
      const options = setup()
      let limits = options.limits
      if (typeof limits === 'function') {
        limits = limits(req)
        if (limits) validateLimits(limits)
      }
      return { config: createParserConfig(options, limits ?? undefined), collector: new MulterUpload(req, options, limits ?? undefined, done) }
    }
  }
}

/** busboy's configuration as multer makes it: a limit is "reached" in busboy one unit before multer's "passed". */
function createParserConfig (options: MulterSetup, limits: MulterLimits | undefined): ReadingConfig {
  const parserLimits: Record<string, number | undefined> = { ...limits }
  const fieldSize = typeof limits?.fieldSize === 'number' ? limits.fieldSize : DEFAULT_FIELD_SIZE
  if (Number.isFinite(fieldSize)) parserLimits.fieldSize = fieldSize + 1
  if (typeof limits?.fileSize === 'number' && Number.isFinite(limits.fileSize)) parserLimits.fileSize = limits.fileSize + 1
  if (typeof limits?.parts === 'number' && Number.isFinite(limits.parts)) parserLimits.parts = limits.parts + 1
  return {
    limits: parserLimits,
    preservePath: options.preservePath,
    defParamCharset: options.defParamCharset,
    defCharset: options.defCharset,
    highWaterMark: options.highWaterMark,
    fileHwm: options.fileHwm
  }
}

type Done = (err: Error | null, result?: StageResult) => void

/**
 * A place in the form's byte order whose verdict is not taken yet: a file whose fileFilter has not answered
 * (`pending`), or an error reported after such a file (held until the files before it are judged).
 */
interface Verdict {
  pending: boolean
  error: unknown
}

/** One request's upload: multer's bookkeeping of fields, placeholders, pending writes and stored files. */
class MulterUpload implements PartCollector {
  private readonly appender: FileAppender
  /** Files the engine stored, removed on error. */
  private uploaded: MulterFile[] = []
  /** Files the engine is storing. */
  private pending: MulterFile[] = []
  private pendingWrites = 0
  private readFinished = false
  private errorOccurred = false
  /**
   * The upload's one cleanup, once begun: who waits for it, then its storage errors. A file stored after it took
   * its list is removed as it arrives.
   */
  private cleanup: { waiting: Array<(storageErrors: Error[]) => void>, storageErrors: Error[] | null } | null = null
  private readonly removedInCleanup = new Set<MulterFile>()
  private whenNoPendingWrites: (() => void) | null = null
  private finished = false
  /** The error being reported once the pending writes end. */
  private heldError: unknown = null
  /**
   * Issue 45 (one answer in byte order): the files whose async fileFilter has not answered, and the first error
   * reported after one of them, in the order of their bytes. An error reported later in time is one of a later byte
   * than a pending file's own verdict (its fileFilter's error, or its LIMIT_FILE_SIZE): it waits for that verdict,
   * however the body was split (read whole, busboy reports a form's end in the same tick as its file).
   */
  private verdicts: Verdict[] = []
  /** Whether `verdicts` holds an error: the upload fails, with it or with an earlier file's verdict. */
  private failureHeld = false
  /** Who waits for every file reported so far to be judged (whenJudged). */
  private judgedWaiters: Array<() => void> = []

  constructor (private readonly req: BodyRequest, private readonly options: MulterSetup,
    private readonly limits: MulterLimits | undefined, private readonly done: Done) {
    req.body = Object.create(null)
    this.appender = new FileAppender(options.fileStrategy, req)
  }

  get settled (): boolean {
    return this.errorOccurred || this.finished || this.failureHeld
  }

  whenJudged (callback: () => void): void {
    if (this.verdicts.length === 0 || this.finished) process.nextTick(callback)
    else this.judgedWaiters.push(callback)
  }

  private hasLimit (key: keyof MulterLimits): boolean {
    return this.limits !== undefined && Object.prototype.hasOwnProperty.call(this.limits, key)
  }

  field (name: string | undefined, value: string | undefined, info: FieldPartInfo): void {
    if (this.errorOccurred || this.failureHeld) return
    if (name === undefined || name === null) return this.abortWithCode('MISSING_FIELD_NAME')
    const fieldname = decodeFormName(name)
    if (info.nameTruncated) return this.abortWithCode('LIMIT_FIELD_KEY')
    if (info.valueTruncated) return this.abortWithCode('LIMIT_FIELD_VALUE', fieldname)
    const limits = this.limits as MulterLimits
    // compat(multer): the name's size is its length as it arrived, before the escapes are reversed.
    if (this.hasLimit('fieldNameSize') && name.length > (limits.fieldNameSize as number)) return this.abortWithCode('LIMIT_FIELD_KEY')
    if (this.hasLimit('fieldNestingDepth') && exceedsNesting(fieldname, limits.fieldNestingDepth as number)) {
      return this.abortWithCode('LIMIT_FIELD_NESTING', fieldname)
    }
    if (this.hasLimit('fieldArrayIndexLimit') && exceedsArrayIndex(fieldname, limits.fieldArrayIndexLimit as number)) {
      return this.abortWithCode('LIMIT_FIELD_ARRAY_INDEX', fieldname)
    }
    try {
      appendField(this.req.body as Record<string, unknown>, fieldname, value)
    } catch {
      this.abortWithCode('INVALID_FIELD_NAME', fieldname)
    }
  }

  file (name: string | undefined, stream: Readable, info: FilePartInfo): void {
    let accepted = false
    let aborting = false
    let sizeLimitReached = false
    let countsAsWrite = false
    const originalname = info.filename && decodeFormName(info.filename)
    const fieldname = name === undefined || name === null ? name : decodeFormName(name)
    const settleWrite = (): void => {
      if (!countsAsWrite) return
      countsAsWrite = false
      this.writeEnded()
    }
    // The engine's own listeners on the file's stream (a 'data' handler) run on later turns too, outside any call of
    // the reader: a throw from one is caught where the stream emits, as that file's storage failure.
    let failStore: ((thrown: unknown) => void) | null = null
    catchListenerThrows(stream, (thrown) => {
      if (failStore !== null) failStore(thrownByUser(thrown))
      else this.fail(thrownByUser(thrown))
    })
    // Security (multer CVE-2025-7338): the error listener exists before the stream can emit.
    stream.on('error', (err) => {
      settleWrite()
      this.fail(err)
    })
    // Security (multer CVE-2026-77063): listened to at once, so a limit passed while fileFilter runs is not missed.
    stream.on('limit', () => {
      sizeLimitReached = true
      if (accepted) {
        aborting = true
        this.abortWithCode('LIMIT_FILE_SIZE', fieldname, originalname)
        // busboy ends a cut file only at its part's end, and the error waits for the engine to finish it: ended
        // now, so the answer and the bounded read-off do not wait for the rest of the upload (multer reads it all).
        // busboy's own end of the stream comes later and goes to the error listener above, which ignores it.
        stream.push(null)
      }
    })
    // Security (multer CVE-2025-48997): a file without a field name is an error, not a crash.
    if (fieldname === undefined || fieldname === null) return this.abortWithCode('MISSING_FIELD_NAME')
    // compat(multer): a part without a file name (or with an empty one) is no file: its bytes are skipped.
    if (!originalname) {
      stream.resume()
      return
    }
    if (this.hasLimit('fieldNameSize') && (name as string).length > (this.limits as MulterLimits).fieldNameSize!) {
      return this.abortWithCode('LIMIT_FIELD_KEY')
    }
    const file: MulterFile = { fieldname, originalname, encoding: info.encoding, mimetype: info.mimeType }
    const placeholder = this.appender.insertPlaceholder(file)
    let filtered = false
    // This file's place among the verdicts, while its fileFilter's answer is awaited (the filter returned first).
    let verdict: Verdict | null = null
    const judge = (refusal: unknown): void => {
      if (verdict !== null) this.judge(verdict, refusal)
      else if (refusal) this.fail(refusal)
    }
    const onFiltered = (err: Error | null, includeFile?: boolean): void => {
      // A filter that calls back twice decides once.
      if (filtered) return
      filtered = true
      const skip = (): void => {
        this.appender.removePlaceholder(placeholder)
        stream.resume()
      }
      // Security (multer CVE-2026-3304): a file accepted after an error began its cleanup is never written.
      if (this.errorOccurred) return skip()
      if (err) {
        this.appender.removePlaceholder(placeholder)
        return judge(err)
      }
      if (!includeFile) {
        skip()
        return judge(null)
      }
      if (sizeLimitReached) {
        this.appender.removePlaceholder(placeholder)
        return judge(new MulterError('LIMIT_FILE_SIZE', fieldname, originalname))
      }
      judge(null)
      // Nor is one accepted once the upload is known to fail: the error of a later byte held for this verdict (now
      // the answer), or for an earlier file's.
      if (this.errorOccurred || this.failureHeld) return skip()
      accepted = true
      countsAsWrite = true
      this.pendingWrites++
      Object.defineProperty(file, 'stream', { configurable: true, enumerable: false, value: stream })
      this.pending.push(file)
      let stored = false
      const onStored = (storeErr: unknown, info?: Partial<MulterFile>, threw = false): void => {
        // An engine that calls back twice, or throws after calling back, stored the file once.
        if (stored) return
        stored = true
        const index = this.pending.indexOf(file)
        if (index !== -1) this.pending.splice(index, 1)
        const failedToStore = threw || Boolean(storeErr)
        if (aborting) {
          // Over its size limit: stored only to be removed with the others.
          this.appender.removePlaceholder(placeholder)
          if (!failedToStore) this.uploaded.push(withEngineInfo(file, info))
          return settleWrite()
        }
        if (failedToStore) {
          this.appender.removePlaceholder(placeholder)
          settleWrite()
          // Its data is no longer read: busboy must not wait for it.
          if (threw) stream.resume()
          return this.fail(storeErr)
        }
        const kept: MulterFile = withEngineInfo(file, info)
        if (this.cleanup !== null) {
          // Security (multer CVE-2026-88932): stored after the cleanup took its list (a slow engine, or an abort
          // while it chose a path): removed here, or it would be an orphan.
          if (this.removedInCleanup.has(file)) {
            this.appender.removePlaceholder(placeholder)
            return settleWrite()
          }
          return this.removeFile(kept, () => {
            this.appender.removePlaceholder(placeholder)
            settleWrite()
          })
        }
        this.appender.replacePlaceholder(placeholder, kept)
        this.uploaded.push(kept)
        settleWrite()
        this.indicateDone()
      }
      failStore = (thrown) => { onStored(thrown, undefined, true) }
      try {
        this.options.storage._handleFile(this.req, file, (storeErr, info) => { onStored(storeErr, info) })
      } catch (thrown) {
        // Deliberate difference from multer (whose process dies on it): a throwing engine is an error of the upload.
        onStored(thrownByUser(thrown), undefined, true)
      }
    }
    try {
      this.options.fileFilter(this.req, file, onFiltered)
    } catch (thrown) {
      // Deliberate difference from multer (whose process dies on it): a throwing filter is an error of the upload.
      if (!filtered) {
        filtered = true
        this.appender.removePlaceholder(placeholder)
        stream.resume()
      }
      return this.fail(thrownByUser(thrown))
    }
    // An async fileFilter: its verdict holds this file's place in the form's byte order until it answers.
    if (!filtered && !this.errorOccurred && !this.failureHeld) {
      verdict = { pending: true, error: null }
      this.verdicts.push(verdict)
    }
  }

  countLimit (limit: 'parts' | 'files' | 'fields'): void {
    this.abortWithCode(limit === 'parts' ? 'LIMIT_PART_COUNT' : limit === 'files' ? 'LIMIT_FILE_COUNT' : 'LIMIT_FIELD_COUNT')
  }

  unreadableFileName (name: string | undefined): void {
    if (name === undefined || name === null) return this.abortWithCode('MISSING_FIELD_NAME')
    this.fail(unreadableFileName(decodeFormName(name)))
  }

  parserError (err: Error): void {
    this.fail(asClientError(err))
  }

  fault (thrown: unknown): void {
    this.fail(thrownByUser(thrown))
  }

  end (): void {
    this.readFinished = true
    this.indicateDone()
  }

  /**
   * The pipeline stops the upload (the request was aborted or passed `limit`): cleanup without waiting for writes.
   * An error already waiting for a write (a file over `fileSize`) is the one reported, as in multer; so is one held
   * for a file whose fileFilter has not answered (no verdict will come now).
   */
  abort (callback: (own?: Error) => void): void {
    if (this.finished) {
      process.nextTick(callback)
      return
    }
    const held = this.errorOccurred ? this.heldError : this.verdicts.find((verdict) => !verdict.pending)?.error ?? null
    this.errorOccurred = true
    this.finished = true
    this.whenNoPendingWrites = null
    // Nothing is judged any more: who waits for the verdicts is told so.
    this.verdicts = []
    this.failureHeld = false
    this.releaseJudgedWaiters()
    // Security (multer CVE-2026-88932): a file whose engine is still choosing its path (its part already read) is
    // not on the removal list, and would be stored after next(err), then removed. Its stream is destroyed now, so
    // the disk engine never opens a file for it; the abort does not wait for engines, which may never answer.
    // Destroyed with an error: a stream that pushed its end but did not emit it yet would otherwise look ended to a
    // pipeline(), which then never ends (nor closes) the engine's sink.
    for (const file of this.pending) if (file.path === undefined) (file.stream as Readable).destroy(new Error('Unexpected end of file'))
    this.removeStored((storageErrors) => {
      if (isObject(held)) (held as { storageErrors?: Error[] }).storageErrors = storageErrors
      callback(held === null ? undefined : held as Error)
    })
  }

  private writeEnded (): void {
    if (--this.pendingWrites === 0 && this.whenNoPendingWrites !== null) {
      const next = this.whenNoPendingWrites
      this.whenNoPendingWrites = null
      next()
    }
  }

  private indicateDone (): void {
    if (!this.readFinished || this.pendingWrites !== 0 || this.errorOccurred || this.finished || this.verdicts.length !== 0) return
    this.finished = true
    process.nextTick(this.done, null, { fields: this.req.body, files: null, release: releaseNothing })
  }

  private abortWithCode (code: string, field?: string, filename?: string): void {
    this.fail(new MulterError(code, field, filename))
  }

  /**
   * An error met in the form (its bytes, a limit, user code): the upload's error at once, unless a file reported
   * before it is still being judged (its async fileFilter has not answered). It is then of a later byte than that
   * file's verdict, and held, the first one only, until the verdicts before it are taken (issue 45).
   */
  private fail (err: unknown): void {
    if (this.errorOccurred) return
    if (this.verdicts.length === 0) return this.abortWithError(err)
    if (this.failureHeld) return
    this.failureHeld = true
    this.verdicts.push({ pending: false, error: err })
  }

  /** A pending file's verdict, given: its refusal (fileFilter's error, or LIMIT_FILE_SIZE), or none (falsy). */
  private judge (verdict: Verdict, refusal: unknown): void {
    const index = this.verdicts.indexOf(verdict)
    if (index === -1 || !verdict.pending) return
    verdict.pending = false
    if (refusal) {
      verdict.error = refusal
      this.failureHeld = true
    } else {
      this.verdicts.splice(index, 1)
    }
    this.takeVerdicts()
  }

  /**
   * Once no file before it is pending, the first refusal or held error is the upload's error (a refusal before a
   * held error is the earlier byte); with none pending at all, who waits for the verdicts is called back.
   */
  private takeVerdicts (): void {
    const first = this.verdicts[0]
    if (first !== undefined && first.pending) return
    this.verdicts = []
    this.failureHeld = false
    if (first !== undefined) this.abortWithError(first.error)
    this.releaseJudgedWaiters()
  }

  private releaseJudgedWaiters (): void {
    if (this.judgedWaiters.length === 0) return
    const waiting = this.judgedWaiters
    this.judgedWaiters = []
    // After the upload's own answer (abortWithError's is on the next tick too, when no write is pending).
    for (const callback of waiting) process.nextTick(callback)
  }

  /**
   * multer's abort: once the files being written are written, every stored file is removed, then the error is
   * reported. `err` may be anything user code threw.
   */
  private abortWithError (err: unknown): void {
    if (this.errorOccurred) return
    this.errorOccurred = true
    this.heldError = err
    const finish = (): void => {
      this.removeStored((storageErrors) => {
        if (this.finished) return
        this.finished = true
        if (isObject(err)) (err as { storageErrors?: Error[] }).storageErrors = storageErrors
        // Never from inside the reader's own call (the fast path reports every part in one).
        process.nextTick(this.done, err as Error)
      })
    }
    if (this.pendingWrites === 0) finish()
    else this.whenNoPendingWrites = finish
  }

  /**
   * Removes the stored files and those being written that have a path, one after another (no recursion). Runs once:
   * a second caller (the pipeline's abort while multer's own cleanup runs) waits for it, and never removes a file
   * twice (a removal deletes the file's path).
   */
  private removeStored (callback: (storageErrors: Error[]) => void): void {
    if (this.cleanup !== null) {
      if (this.cleanup.storageErrors === null) this.cleanup.waiting.push(callback)
      else process.nextTick(callback, this.cleanup.storageErrors)
      return
    }
    const cleanup: NonNullable<MulterUpload['cleanup']> = this.cleanup = { waiting: [callback], storageErrors: null }
    const beingWritten = this.pending.filter((file) => file.path)
    for (const file of beingWritten) this.removedInCleanup.add(file)
    const files = this.uploaded.concat(beingWritten)
    this.pending = []
    const storageErrors: Error[] = []
    let index = 0
    const removeNext = (): void => {
      if (index === files.length) {
        cleanup.storageErrors = storageErrors
        for (const waiting of cleanup.waiting.splice(0)) waiting(storageErrors)
        return
      }
      const file = files[index++]
      this.removeFile(file, (err) => {
        if (err) {
          if (isObject(err)) Object.assign(err, { file, field: file.fieldname })
          storageErrors.push(err)
        }
        // Security (multer CVE-2026-3520): the next removal starts on a fresh stack, 20,000 files or not.
        setImmediate(removeNext)
      })
    }
    removeNext()
  }

  /**
   * The engine's `_removeFile`, called back once: a throw is its error (a deliberate difference from multer, where
   * it ends the process or leaves the request unanswered), and a second call back is ignored.
   */
  private removeFile (file: MulterFile, callback: (err: Error | null) => void): void {
    let answered = false
    const once = (err: Error | null): void => {
      if (answered) return
      answered = true
      callback(err)
    }
    try {
      this.options.storage._removeFile(this.req, file, once)
    } catch (thrown) {
      once(thrownByUser(thrown) as Error)
    }
  }
}

/**
 * The file as the engine's info completes it, as multer merges them (the engine's keys after the file's). Assigned,
 * not spread: an object spread costs microseconds per file (V8 11, Node 20).
 */
function withEngineInfo (file: MulterFile, info: Partial<MulterFile> | undefined): MulterFile {
  return Object.assign({}, file, info)
}

/** Where accepted files appear on the request, in the order their parts arrived (placeholders keep the order). */
class FileAppender {
  constructor (private readonly strategy: FileStrategy, private readonly req: BodyRequest & { file?: unknown, files?: unknown }) {
    if (strategy === 'ARRAY') req.files = []
    else if (strategy === 'OBJECT') req.files = Object.create(null)
  }

  insertPlaceholder (file: MulterFile): Record<string, unknown> {
    const placeholder: Record<string, unknown> = { fieldname: file.fieldname }
    if (this.strategy === 'ARRAY') (this.req.files as unknown[]).push(placeholder)
    else if (this.strategy === 'OBJECT') {
      const byField = this.req.files as Record<string, unknown[]>
      if (byField[file.fieldname]) byField[file.fieldname].push(placeholder)
      else byField[file.fieldname] = [placeholder]
    }
    return placeholder
  }

  removePlaceholder (placeholder: Record<string, unknown>): void {
    if (this.strategy === 'ARRAY') removeItem(this.req.files as unknown[], placeholder)
    else if (this.strategy === 'OBJECT') {
      const byField = this.req.files as Record<string, unknown[]>
      const list = byField[placeholder.fieldname as string]
      if (!list) return
      removeItem(list, placeholder)
      if (list.length === 0) delete byField[placeholder.fieldname as string]
    }
  }

  replacePlaceholder (placeholder: Record<string, unknown>, file: MulterFile): void {
    if (this.strategy === 'VALUE') {
      this.req.file = file
      return
    }
    // compat(multer): the placeholder object itself becomes the file, its keys in the file's order.
    delete placeholder.fieldname
    Object.assign(placeholder, file)
  }
}

function removeItem (list: unknown[], item: unknown): void {
  const index = list.indexOf(item)
  if (index !== -1) list.splice(index, 1)
}

/** Makes a throw from any listener of `stream` (user code among them) a call of `onThrow`, not an exception of the emitter's caller. */
function catchListenerThrows (stream: Readable, onThrow: (thrown: unknown) => void): void {
  // The stage's file streams are all GuardedStreams.
  (stream as GuardedStream).onListenerThrow = onThrow
}

/** multer's files are the app's once handed on: a refusal after that (none in multer) removes nothing. */
function releaseNothing (callback: () => void): void {
  process.nextTick(callback)
}

function isObject (value: unknown): value is object {
  return (value !== null && typeof value === 'object') || typeof value === 'function'
}

/** Calls `next` in the async context the middleware was called in (AsyncLocalStorage survives the upload), as multer does. */
export function bindToCaller (next: (err?: unknown) => void): (err?: unknown) => void {
  const resource = new AsyncResource('multer')
  return (err) => { resource.runInAsyncScope(next, null, err) }
}
